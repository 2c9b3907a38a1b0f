//go:build linux

package trampoline

import "golang.org/x/sys/unix"

// auditArch is seccomp_data.arch of this architecture's own system calls;
// AArch32 ones (a compat kernel) have another and are refused.
const auditArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is x86-64's; arm64 has none.
const x32Bit = 0
