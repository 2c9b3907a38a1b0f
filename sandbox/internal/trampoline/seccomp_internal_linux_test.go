package trampoline

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF interprets the classic BPF the filter is made of, on one
// struct seccomp_data (little-endian, as on the supported architectures).
func runBPF(t *testing.T, prog []unix.SockFilter, nr int32, arch uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNr:], uint32(nr))
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			taken := acc == in.K
			if in.Code&0xf0 == unix.BPF_JSET {
				taken = acc&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %d: code %#x is not interpreted here", pc, in.Code)
		}
	}
	t.Fatal("the filter ran off its end")
	return 0
}

func TestSocketFilter(t *testing.T) {
	if auditArch == 0 {
		t.Skip("no filter on this architecture")
	}
	const (
		unixFamily = unix.AF_UNIX
		stream     = unix.SOCK_STREAM | unix.SOCK_CLOEXEC
		dgram      = unix.SOCK_DGRAM | unix.SOCK_NONBLOCK
	)
	type filterCase struct {
		name      string
		anySocket bool
		nr        int32
		arch      uint32
		args      []uint64
		want      uint32
	}
	tests := []filterCase{
		{"socket(AF_UNIX)", false, unix.SYS_SOCKET, auditArch, []uint64{unixFamily, stream}, retEACCES},
		{"socket(AF_UNIX) with junk in the high bits", false, unix.SYS_SOCKET, auditArch, []uint64{1<<32 | unixFamily, stream}, retEACCES},
		{"socket(AF_INET) in a namespace", false, unix.SYS_SOCKET, auditArch, []uint64{unix.AF_INET, stream}, retAllow},
		{"socket(AF_INET6) in a namespace", false, unix.SYS_SOCKET, auditArch, []uint64{unix.AF_INET6, dgram}, retAllow},
		{"socket(AF_INET) under Landlock's TCP rules", true, unix.SYS_SOCKET, auditArch, []uint64{unix.AF_INET, dgram}, retEACCES},
		{"socket(AF_NETLINK) under Landlock's TCP rules", true, unix.SYS_SOCKET, auditArch, []uint64{unix.AF_NETLINK, dgram}, retEACCES},
		{"socketpair(AF_UNIX, SOCK_STREAM)", false, unix.SYS_SOCKETPAIR, auditArch, []uint64{unixFamily, stream}, retAllow},
		{"socketpair(AF_UNIX, SOCK_SEQPACKET)", true, unix.SYS_SOCKETPAIR, auditArch, []uint64{unixFamily, unix.SOCK_SEQPACKET}, retAllow},
		{"socketpair(AF_UNIX, SOCK_DGRAM)", false, unix.SYS_SOCKETPAIR, auditArch, []uint64{unixFamily, dgram}, retEACCES},
		{"socketpair(AF_UNIX, SOCK_DGRAM), under Landlock's TCP rules", true, unix.SYS_SOCKETPAIR, auditArch, []uint64{unixFamily, unix.SOCK_DGRAM}, retEACCES},
		{"io_uring_setup", false, unix.SYS_IO_URING_SETUP, auditArch, nil, retEPERM},
		{"read", false, unix.SYS_READ, auditArch, nil, retAllow},
		{"connect", false, unix.SYS_CONNECT, auditArch, nil, retAllow},
		{"no system call (-1)", false, -1, auditArch, nil, retAllow},
		{"another architecture's read", false, unix.SYS_READ, unix.AUDIT_ARCH_I386, nil, retKill},
		{"another architecture's socket", false, 359, unix.AUDIT_ARCH_I386, []uint64{unixFamily, stream}, retKill},
		{"AArch32", false, unix.SYS_SOCKET, unix.AUDIT_ARCH_ARM, []uint64{unixFamily, stream}, retKill},
	}
	if x32Bit != 0 {
		tests = append(tests,
			filterCase{"x32 socket(AF_UNIX)", false, x32Bit | unix.SYS_SOCKET, auditArch, []uint64{unixFamily, stream}, retENOSYS},
			filterCase{"x32 read", false, x32Bit | unix.SYS_READ, auditArch, nil, retENOSYS})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runBPF(t, socketFilter(tt.anySocket), tt.nr, tt.arch, tt.args...); got != tt.want {
				t.Fatalf("filter returned %#x, want %#x", got, tt.want)
			}
		})
	}
}
