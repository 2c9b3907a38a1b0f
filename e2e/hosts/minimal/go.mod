module example.com/basis-hosts/minimal

go 1.26.0

require (
	github.com/basis-go/basis/approver v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/workspace v0.1.0
)
