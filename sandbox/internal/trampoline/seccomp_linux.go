package trampoline

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FilterSockets installs, on the calling thread (locked, about to start
// the program, no_new_privs set), the seccomp filter of a program without
// the network; the program and all it starts inherit it. Landlock (ABI 7)
// has no say over connecting to a Unix socket by its path, and the network
// namespace does not hide filesystem sockets (docker.sock, the session
// bus, ssh-agent), so the filter refuses, with EACCES:
//
//   - socket(AF_UNIX, ...), and with Landlock's TCP rules instead of a
//     namespace (UDP open) every socket(2);
//   - socketpair(AF_UNIX, SOCK_DGRAM, ...): a datagram socket may send to
//     any path with sendto; stream and seqpacket pairs are connected once
//     and for all and stay allowed;
//   - io_uring_setup (EPERM, as where io_uring is disabled): io_uring
//     makes sockets without the socket system call;
//   - and, killing the process, any system call of another architecture
//     (i386's int 0x80 with its socketcall, AArch32); on x86-64 the x32
//     ABI's numbers fail with ENOSYS.
//
// This is stricter than the sandbox needs: Unix sockets in the per-call
// TMPDIR are refused too. With the network allowed there is no filter.
func FilterSockets(cut string) error {
	if cut == "" {
		return nil
	}
	if auditArch == 0 {
		return &UnavailableError{Reason: "the sandbox's seccomp filter, which keeps a program without the network from Unix sockets, is not written for this architecture"}
	}
	prog := socketFilter(cut != CutNamespace)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("installing the seccomp filter: %w; the program did not run", errno)
	}
	return nil
}

// Offsets in struct seccomp_data; an argument's low 32 bits, which is
// what the kernel reads of an int argument, come first on the
// little-endian architectures supported.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

// Seccomp return values.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// socketFilter is the BPF program; anySocket refuses every socket(2), not
// only AF_UNIX ones.
func socketFilter(anySocket bool) []unix.SockFilter {
	var a bpf
	a.load(offArch)
	a.jumpIf(unix.BPF_JEQ, auditArch, "native", "")
	a.ret(retKill)
	a.label("native")
	a.load(offNr)
	if x32Bit != 0 {
		// nr -1 is no system call (ENOSYS from the kernel); other
		// numbers with the x32 bit are the x32 ABI's.
		a.jumpIf(unix.BPF_JEQ, 0xffffffff, "allow", "")
		a.jumpIf(unix.BPF_JSET, x32Bit, "nosys", "")
	}
	a.jumpIf(unix.BPF_JEQ, unix.SYS_SOCKET, "socket", "")
	a.jumpIf(unix.BPF_JEQ, unix.SYS_SOCKETPAIR, "socketpair", "")
	a.jumpIf(unix.BPF_JEQ, unix.SYS_IO_URING_SETUP, "eperm", "allow")
	a.label("socket")
	if !anySocket {
		a.load(offArg0)
		a.jumpIf(unix.BPF_JEQ, unix.AF_UNIX, "eacces", "allow")
	} else {
		a.ret(retEACCES)
	}
	a.label("socketpair")
	a.load(offArg0)
	a.jumpIf(unix.BPF_JEQ, unix.AF_UNIX, "", "allow")
	a.load(offArg1)
	a.and(0xf) // SOCK_TYPE_MASK: the flags (SOCK_CLOEXEC, SOCK_NONBLOCK) are above it
	a.jumpIf(unix.BPF_JEQ, unix.SOCK_DGRAM, "eacces", "allow")
	a.label("eacces")
	a.ret(retEACCES)
	a.label("eperm")
	a.ret(retEPERM)
	a.label("nosys")
	a.ret(retENOSYS)
	a.label("allow")
	a.ret(retAllow)
	return a.assemble()
}

// bpf assembles a classic BPF program with forward jumps to labels.
type bpf struct {
	prog   []unix.SockFilter
	labels map[string]int
	jumps  []jump
}

type jump struct {
	at     int
	jt, jf string // "" is the next instruction
}

func (a *bpf) load(off uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *bpf) and(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

func (a *bpf) ret(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

func (a *bpf) jumpIf(op uint16, k uint32, jt, jf string) {
	a.jumps = append(a.jumps, jump{at: len(a.prog), jt: jt, jf: jf})
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (a *bpf) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

// assemble resolves the jumps; a jump backwards, to a missing label or
// farther than 255 instructions is a bug in this file, so it panics.
func (a *bpf) assemble() []unix.SockFilter {
	offset := func(from int, name string) uint8 {
		if name == "" {
			return 0
		}
		to, ok := a.labels[name]
		if !ok || to <= from || to-from-1 > 255 {
			panic("sandbox: bad jump to " + name + " in the seccomp filter")
		}
		return uint8(to - from - 1)
	}
	for _, j := range a.jumps {
		a.prog[j.at].Jt = offset(j.at, j.jt)
		a.prog[j.at].Jf = offset(j.at, j.jf)
	}
	return a.prog
}
