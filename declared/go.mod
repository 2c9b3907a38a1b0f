module github.com/basis-go/basis/declared

go 1.25.0

require (
	github.com/basis-go/basis/contract v0.0.0-00010101000000-000000000000
	github.com/basis-go/basis/subprocess v0.0.0-00010101000000-000000000000
	github.com/google/go-cmp v0.7.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
)

require golang.org/x/text v0.14.0 // indirect

replace github.com/basis-go/basis/contract => ../contract

replace github.com/basis-go/basis/subprocess => ../subprocess
