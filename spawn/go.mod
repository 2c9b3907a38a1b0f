module github.com/basis-go/basis/spawn

go 1.25.0

require (
	github.com/basis-go/basis/contract v0.0.0-00010101000000-000000000000
	github.com/basis-go/basis/subprocess v0.0.0-00010101000000-000000000000
	github.com/google/go-cmp v0.7.0
	mvdan.cc/sh/v3 v3.13.1
)

replace github.com/basis-go/basis/contract => ../contract

replace github.com/basis-go/basis/subprocess => ../subprocess
