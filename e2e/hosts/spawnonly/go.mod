module example.com/basis-hosts/spawnonly

go 1.26.0

require (
	github.com/basis-go/basis/approver v0.1.0
	github.com/basis-go/basis/cmd/basis/runtime v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/spawn v0.1.0
)
