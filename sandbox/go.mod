module github.com/basis-go/basis/sandbox

go 1.26.0

require (
	github.com/basis-go/basis/configfile v0.1.0
	github.com/basis-go/basis/contract v0.1.0
	github.com/google/go-cmp v0.7.0
	github.com/landlock-lsm/go-landlock v0.11.2
	golang.org/x/sys v0.50.0
)

require kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect

replace (
	github.com/basis-go/basis/configfile => ../configfile
	github.com/basis-go/basis/contract => ../contract
)
