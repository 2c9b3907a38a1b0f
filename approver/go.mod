module github.com/basis-go/basis/approver

go 1.26.0

require (
	github.com/basis-go/basis/configfile v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/subprocess v0.1.0
	github.com/google/go-cmp v0.7.0
)

replace (
	github.com/basis-go/basis/configfile => ../configfile
	github.com/basis-go/basis/contract => ../contract
	github.com/basis-go/basis/subprocess => ../subprocess
)
