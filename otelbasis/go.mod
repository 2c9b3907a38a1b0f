module github.com/basis-go/basis/otelbasis

go 1.26.0

require (
	github.com/basis-go/basis/approver v0.1.0
	github.com/basis-go/basis/cmd/basis/runtime v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/google/go-cmp v0.7.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

require (
	github.com/basis-go/basis/configfile v0.1.0 // indirect
	github.com/basis-go/basis/inputschema v0.1.0 // indirect
	github.com/basis-go/basis/subprocess v0.1.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/basis-go/basis/approver => ../approver
	github.com/basis-go/basis/cmd/basis/runtime => ../cmd/basis/runtime
	github.com/basis-go/basis/configfile => ../configfile
	github.com/basis-go/basis/contract => ../contract
	github.com/basis-go/basis/inputschema => ../inputschema
	github.com/basis-go/basis/subprocess => ../subprocess
)
