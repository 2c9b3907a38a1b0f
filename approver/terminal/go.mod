module github.com/basis-go/basis/approver/terminal

go 1.26.0

require (
	github.com/basis-go/basis/approver v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/google/go-cmp v0.7.0
	golang.org/x/sys v0.47.0
	golang.org/x/term v0.45.0
)

require (
	github.com/basis-go/basis/configfile v0.1.0 // indirect
	github.com/basis-go/basis/subprocess v0.1.0 // indirect
)

replace (
	github.com/basis-go/basis/approver => ../
	github.com/basis-go/basis/configfile => ../../configfile
	github.com/basis-go/basis/contract => ../../contract
	github.com/basis-go/basis/subprocess => ../../subprocess
)
