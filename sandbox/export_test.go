//go:build linux

package sandbox

import (
	"encoding/binary"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/basis-go/basis/sandbox/internal/trampoline"
)

// SimulateKernel makes the sandbox believe the kernel offers Landlock ABI
// abi and, with netns, network namespaces — made by starting the
// trampoline in one, as for an unprivileged process — until restore is
// called. Tests
// that use it must not run in parallel with other sandbox tests.
func SimulateKernel(abi int, netns bool, why string) (restore func()) {
	real := probe()
	probed = support{abi: abi, netns: netns, pidns: netns && real.pidns, userns: real.userns, why: why,
		threadMounts: real.threadMounts, usernsMounts: real.usernsMounts, helper: real.helper}
	return func() { probed = real }
}

// SimulateMissingMain makes Prepare behave as in a program that never
// called Main, until restore is called.
func SimulateMissingMain() (restore func()) {
	mainCalled.Store(false)
	return func() { mainCalled.Store(true) }
}

// GoOnChildlessThread is goOnChildlessThread.
var GoOnChildlessThread = trampoline.GoOnChildlessThread

// SimulateNoMountNamespaces makes the sandbox believe no mount namespace
// can be made here, until restore is called.
func SimulateNoMountNamespaces() (restore func()) {
	real := probe()
	probed.threadMounts, probed.usernsMounts = false, false
	return func() { probed = real }
}

func prctlNoNewPrivs() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }

// SetAudit turns the kernel's audit subsystem on or off (AUDIT_SET,
// CAP_AUDIT_CONTROL) and returns what restores its previous state: the
// tests of what the audit reports need it on, and basis never turns it
// on itself.
func SetAudit(on bool) (restore func() error, err error) {
	was, err := auditEnabled()
	if err != nil {
		return nil, err
	}
	if err := setAudit(on); err != nil {
		return nil, err
	}
	forgetAuditCheck()
	return func() error { defer forgetAuditCheck(); return setAudit(was) }, nil
}

func setAudit(on bool) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// nlmsghdr, then struct audit_status: mask, enabled, and the rest.
	req := make([]byte, unix.NLMSG_HDRLEN+40)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.AUDIT_SET)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(req[unix.NLMSG_HDRLEN:], unix.AUDIT_STATUS_ENABLED)
	if on {
		binary.NativeEndian.PutUint32(req[unix.NLMSG_HDRLEN+4:], 1)
	}
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 512)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if n >= unix.NLMSG_HDRLEN+4 && binary.NativeEndian.Uint16(buf[4:]) == unix.NLMSG_ERROR {
		if e := int32(binary.NativeEndian.Uint32(buf[unix.NLMSG_HDRLEN:])); e != 0 {
			return unix.Errno(-e)
		}
	}
	return nil
}

// ParseAuditRecord is parseAuditRecord, DenialOf denialOf.
var (
	ParseAuditRecord = func(text string) map[string]string { return parseAuditRecord(text) }
	DenialOf         = func(rec map[string]string) Denial { return denialOf(rec) }
)

// LandlockABI is the Landlock ABI the sandbox found on this kernel.
func LandlockABI() int { return probe().abi }

// KeptThread confines a thread as a kept thread is for a call in
// workspace with nothing to protect, and returns what starts a command
// from it (in a PID namespace of its own, as a sandboxed start does) and
// what ends the thread. It is the floor under a privileged sandboxed
// start: the hand-off to the thread and a confined program, without the
// search, the checks and the emptying of the TMPDIR around each call.
func KeptThread(workspace string) (start func(*exec.Cmd) error, end func(), err error) {
	sp := spec{Version: specVersion, Net: string(probe().cut()), Write: []string{workspace}}
	k, err := newKeptThread(keptKey(sp), ruledPaths(sp))
	if err != nil {
		return nil, nil, err
	}
	sp.Write = append([]string{k.tmp.path}, sp.Write...)
	start = func(cmd *exec.Cmd) error {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		withPIDNamespace(cmd.SysProcAttr, probe())
		return k.start(cmd, sp)
	}
	return start, k.end, nil
}
