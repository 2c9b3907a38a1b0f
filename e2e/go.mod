module github.com/basis-go/basis/e2e

go 1.26.0

require (
	github.com/basis-go/basis/approver v0.1.0
	github.com/basis-go/basis/cmd/basis/runtime v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/basis-go/basis/declared v0.1.0
	github.com/basis-go/basis/mcpbind v0.1.0
	github.com/basis-go/basis/sandbox v0.1.0
	github.com/basis-go/basis/workspace v0.1.0
	github.com/google/go-cmp v0.7.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/sys v0.50.0
)

require (
	github.com/basis-go/basis/configfile v0.1.0 // indirect
	github.com/basis-go/basis/inputschema v0.1.0 // indirect
	github.com/basis-go/basis/subprocess v0.1.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)

replace (
	github.com/basis-go/basis/approver => ../approver
	github.com/basis-go/basis/cmd/basis/runtime => ../cmd/basis/runtime
	github.com/basis-go/basis/configfile => ../configfile
	github.com/basis-go/basis/contract => ../contract
	github.com/basis-go/basis/declared => ../declared
	github.com/basis-go/basis/inputschema => ../inputschema
	github.com/basis-go/basis/mcpbind => ../mcpbind
	github.com/basis-go/basis/sandbox => ../sandbox
	github.com/basis-go/basis/subprocess => ../subprocess
	github.com/basis-go/basis/workspace => ../workspace
)

tool (
	github.com/modelcontextprotocol/go-sdk/conformance/everything-client
	github.com/modelcontextprotocol/go-sdk/conformance/everything-server
)
