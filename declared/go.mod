module github.com/basis-go/basis/declared

go 1.26.0

require (
	github.com/basis-go/basis/configfile v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/inputschema v0.1.0
	github.com/basis-go/basis/subprocess v0.1.0
	github.com/google/go-cmp v0.7.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
)

require golang.org/x/text v0.14.0 // indirect

replace (
	github.com/basis-go/basis/configfile => ../configfile
	github.com/basis-go/basis/contract => ../contract
	github.com/basis-go/basis/inputschema => ../inputschema
	github.com/basis-go/basis/subprocess => ../subprocess
)
