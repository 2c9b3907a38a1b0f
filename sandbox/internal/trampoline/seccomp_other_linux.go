//go:build linux && !amd64 && !arm64

package trampoline

// No seccomp filter is written for this architecture: a program without
// the network fails closed (FilterSockets).
const (
	auditArch = 0
	x32Bit    = 0
)
