module github.com/basis-go/basis/cmd/basis

go 1.25.0

require (
	github.com/basis-go/basis/approver v0.0.0-00010101000000-000000000000
	github.com/basis-go/basis/contract v0.0.0-00010101000000-000000000000
	github.com/basis-go/basis/declared v0.0.0-00010101000000-000000000000
	github.com/basis-go/basis/spawn v0.0.0-00010101000000-000000000000
	github.com/basis-go/basis/subprocess v0.0.0-00010101000000-000000000000
	github.com/google/go-cmp v0.7.0
	golang.org/x/sync v0.17.0
	golang.org/x/term v0.45.0
)

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	mvdan.cc/sh/v3 v3.13.1 // indirect
)

replace (
	github.com/basis-go/basis/approver => ../../approver
	github.com/basis-go/basis/contract => ../../contract
	github.com/basis-go/basis/declared => ../../declared
	github.com/basis-go/basis/spawn => ../../spawn
	github.com/basis-go/basis/subprocess => ../../subprocess
)
