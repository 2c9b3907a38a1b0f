module github.com/basis-go/basis/cmd/basis

go 1.26.0

require (
	github.com/basis-go/basis/approver v0.1.0
	github.com/basis-go/basis/approver/terminal v0.1.0
	github.com/basis-go/basis/cmd/basis/runtime v0.1.0
	github.com/basis-go/basis/configfile v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/declared v0.1.0
	github.com/basis-go/basis/mcpbind v0.1.0
	github.com/basis-go/basis/otelbasis v0.1.0
	github.com/basis-go/basis/sandbox v0.1.0
	github.com/basis-go/basis/spawn v0.1.0
	github.com/basis-go/basis/subprocess v0.1.0
	github.com/basis-go/basis/workspace v0.1.0
	github.com/google/go-cmp v0.7.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	go.opentelemetry.io/proto/otlp v1.11.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.46.0
	golang.org/x/text v0.42.0
	google.golang.org/grpc v1.83.2
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/basis-go/basis/inputschema v0.1.0 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.30.0 // indirect
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)

replace (
	github.com/basis-go/basis/approver => ../../approver
	github.com/basis-go/basis/approver/terminal => ../../approver/terminal
	github.com/basis-go/basis/cmd/basis/runtime => ./runtime
	github.com/basis-go/basis/configfile => ../../configfile
	github.com/basis-go/basis/contract => ../../contract
	github.com/basis-go/basis/declared => ../../declared
	github.com/basis-go/basis/inputschema => ../../inputschema
	github.com/basis-go/basis/mcpbind => ../../mcpbind
	github.com/basis-go/basis/otelbasis => ../../otelbasis
	github.com/basis-go/basis/sandbox => ../../sandbox
	github.com/basis-go/basis/spawn => ../../spawn
	github.com/basis-go/basis/subprocess => ../../subprocess
	github.com/basis-go/basis/workspace => ../../workspace
)
