//go:build linux

package trampoline

import "golang.org/x/sys/unix"

// auditArch is seccomp_data.arch of this architecture's own system calls.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks a system call number of the x32 ABI, which shares the
// x86-64 arch value.
const x32Bit = 0x40000000
