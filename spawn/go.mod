module github.com/basis-go/basis/spawn

go 1.26.0

require (
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/subprocess v0.1.0
	github.com/google/go-cmp v0.7.0
	mvdan.cc/sh/v3 v3.14.1
)

replace (
	github.com/basis-go/basis/contract => ../contract
	github.com/basis-go/basis/subprocess => ../subprocess
)
