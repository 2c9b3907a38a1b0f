// Command sbhelper is what the sandbox tests run inside the sandbox. Each
// subcommand tries one thing and prints "ok" or the error; it exits 0 when
// the attempt succeeded and 1 when it did not.
//
//	sbhelper write PATH        create PATH and write to it
//	sbhelper connect ADDR      open a TCP connection to ADDR
//	sbhelper setns PATH        enter the network namespace at PATH
//	sbhelper caps              print the capability sets
//	sbhelper tmpdir            print $TMPDIR after writing a file in it
//	sbhelper tmpstate          print $TMPDIR, its mode, owner and entry count,
//	                           then leave things in it and open it to everyone
//	sbhelper child ARGS...     run sbhelper ARGS... as a child, relay its output and status
//	sbhelper ioctl PATH REQ    open PATH read-only and issue REQ (tcgets, tiocsti) on it
//	sbhelper ids               print the uid, gid and the first uid mapping
//	sbhelper pdeathsig         print the parent-death signal's number
//	sbhelper udpecho ADDR      send a datagram to ADDR and wait for the echo
//	sbhelper loopback          listen on 127.0.0.1 and connect to it (TCP, then UDP)
//	sbhelper escape HOW [stay] leave a process behind that tries to escape the
//	                           call (HOW: setsid, setpgid, daemon); print "up"
//	                           once it runs, then exit (or, with stay, wait forever)
//	sbhelper survive           what escape leaves behind: report on fd 3, wait forever
//	sbhelper rename OLD NEW    rename OLD to NEW
//	sbhelper mkdir PATH        create the directory PATH
//	sbhelper link OLD NEW      make NEW a hard link to OLD
//	sbhelper remove PATH       remove PATH and everything beneath it
//	sbhelper read PATH         read PATH, print how many bytes
//	sbhelper env NAME          print $NAME
//	sbhelper writeenv NAME F   create $NAME (and parents) and write F in it
//	sbhelper unix PATH         connect to the Unix stream socket PATH
//	sbhelper unixgram PATH     send a datagram to PATH from a socketpair(AF_UNIX, SOCK_DGRAM)
//	sbhelper listen PATH       listen on the Unix socket PATH ($TMPDIR/PATH when relative)
//	sbhelper abstract NAME     connect to the abstract Unix socket NAME
//	sbhelper udp ADDR          send a UDP datagram to ADDR
//	sbhelper iouring           set up an io_uring
//	sbhelper int80             socket(AF_UNIX) through the i386 system call entry (amd64)
//	sbhelper kill PID          send SIGTERM to PID
//	sbhelper ptrace PID        attach to PID with ptrace (and detach)
//	sbhelper wait              print "ready", then wait for stdin to close
//	sbhelper undo PATH         in new user and mount namespaces, try to make the
//	                           read-only mount at PATH writable; ok if it is then
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: sbhelper write|connect|setns|tmpdir|child ..."))
	}
	switch arg := func(i int) string {
		if len(os.Args) <= i {
			fail(fmt.Errorf("missing argument"))
		}
		return os.Args[i]
	}; os.Args[1] {
	case "write":
		done(os.WriteFile(arg(2), []byte("written"), 0o600))
	case "connect":
		c, err := net.DialTimeout("tcp", arg(2), 5*time.Second)
		if err == nil {
			c.Close()
		}
		done(err)
	case "setns":
		f, err := os.Open(arg(2))
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
		}
		done(err)
	case "caps":
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			fail(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "Cap") {
				fmt.Println(strings.Join(strings.Fields(line), " "))
			}
		}
	case "tmpstate":
		dir := os.Getenv("TMPDIR")
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err != nil {
			fail(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			fail(err)
		}
		acl := "none"
		if _, err := unix.Getxattr(dir, "system.posix_acl_default", nil); err == nil {
			acl = "default"
		}
		fmt.Printf("%s mode=%o uid=%d entries=%d acl=%s\n", dir, st.Mode&0o7777, st.Uid, len(entries), acl)
		// What a hostile program leaves for the next call that gets the
		// directory: files, a directory it cannot list, a link, and the
		// directory itself opened to everyone.
		for _, err := range []error{
			os.WriteFile(filepath.Join(dir, "left"), []byte("x"), 0o666),
			os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755),
			os.WriteFile(filepath.Join(dir, "sub", "deeper", "f"), []byte("x"), 0o600),
			os.Chmod(filepath.Join(dir, "sub"), 0),
			os.Symlink("/etc/passwd", filepath.Join(dir, "link")),
			syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o666),
			os.Chmod(dir, 0o1777),
		} {
			if err != nil {
				fail(err)
			}
		}
		// A default ACL giving uid 65533 everything, which what the next
		// program creates would inherit (where the filesystem has ACLs).
		if err := unix.Setxattr(dir, "system.posix_acl_default", defaultACL(65533), 0); err != nil && err != unix.EOPNOTSUPP {
			fail(err)
		}
	case "tmpdir":
		dir := os.Getenv("TMPDIR")
		if err := os.WriteFile(filepath.Join(dir, "scratch"), []byte("x"), 0o600); err != nil {
			fail(err)
		}
		fmt.Println(dir)
	case "child":
		cmd := exec.Command(os.Args[0], os.Args[2:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			os.Exit(1)
		}
	case "ioctl":
		done(ioctl(arg(2), arg(3)))
	case "ids":
		m, err := os.ReadFile("/proc/self/uid_map")
		if err != nil {
			fail(err)
		}
		f := strings.Fields(string(m))
		if len(f) < 2 {
			fail(fmt.Errorf("uid_map is %q", m))
		}
		fmt.Printf("uid %d gid %d uid_map %s %s\n", os.Getuid(), os.Getgid(), f[0], f[1])
	case "pdeathsig":
		var sig int
		if _, _, errno := unix.Syscall(unix.SYS_PRCTL, unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0); errno != 0 {
			fail(errno)
		}
		fmt.Println(sig)
	case "udpecho":
		done(udpEcho(arg(2)))
	case "loopback":
		done(loopback())
	case "escape":
		if err := escape(arg(2)); err != nil {
			fail(err)
		}
		fmt.Println("up")
		if len(os.Args) > 3 && os.Args[3] == "stay" {
			waitForever()
		}
	case "spawn":
		// The middle of a double fork: already in a session of its own,
		// it starts the survivor and exits at once.
		cmd := exec.Command(os.Args[0], "survive")
		cmd.ExtraFiles = []*os.File{os.NewFile(3, "report")}
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
	case "survive":
		report := os.NewFile(3, "report")
		fmt.Fprintln(report, "up")
		report.Close()
		waitForever()
	case "rename":
		done(os.Rename(arg(2), arg(3)))
	case "link":
		done(os.Link(arg(2), arg(3)))
	case "mkdir":
		done(os.Mkdir(arg(2), 0o755))
	case "remove":
		if _, err := os.Lstat(arg(2)); err != nil {
			fail(err)
		}
		done(os.RemoveAll(arg(2)))
	case "open":
		// Opens for reading without waiting for data: a terminal's read
		// would block.
		f, err := os.OpenFile(arg(2), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != nil {
			fail(err)
		}
		done(f.Close())
	case "read":
		data, err := os.ReadFile(arg(2))
		if err != nil {
			fail(err)
		}
		fmt.Println(len(data), "bytes")
	case "env":
		fmt.Println(os.Getenv(arg(2)))
	case "writeenv":
		dir := os.Getenv(arg(2))
		if dir == "" {
			fail(fmt.Errorf("$%s is not set", arg(2)))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(err)
		}
		done(os.WriteFile(filepath.Join(dir, arg(3)), []byte("written"), 0o600))
	case "unix":
		c, err := net.DialTimeout("unix", arg(2), 5*time.Second)
		if err == nil {
			c.Close()
		}
		done(err)
	case "unixgram":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fail(fmt.Errorf("socketpair: %w", err))
		}
		done(unix.Sendto(fds[0], []byte("hi"), 0, &unix.SockaddrUnix{Name: arg(2)}))
	case "listen":
		path := arg(2)
		if !filepath.IsAbs(path) {
			path = filepath.Join(os.Getenv("TMPDIR"), path)
		}
		ln, err := net.Listen("unix", path)
		if err == nil {
			ln.Close()
		}
		done(err)
	case "abstract":
		c, err := net.DialTimeout("unix", "@"+arg(2), 5*time.Second)
		if err == nil {
			c.Close()
		}
		done(err)
	case "udp":
		c, err := net.Dial("udp", arg(2))
		if err == nil {
			_, err = c.Write([]byte("hi"))
			c.Close()
		}
		done(err)
	case "iouring":
		var params [120]byte // struct io_uring_params
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 8, uintptr(unsafe.Pointer(&params)), 0)
		if errno != 0 {
			fail(fmt.Errorf("io_uring_setup: %w", errno))
		}
		unix.Close(int(fd))
		done(nil)
	case "int80":
		done(int80Socket())
	case "kill":
		done(unix.Kill(pid(arg(2)), unix.SIGTERM))
	case "ptrace":
		p := pid(arg(2))
		err := unix.PtraceAttach(p)
		if err == nil {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(p, &ws, unix.WALL, nil)
			_ = unix.PtraceDetach(p)
		}
		done(err)
	case "undo":
		// A process that made its own user namespace holds every
		// capability there, CAP_SYS_ADMIN included.
		cmd := exec.Command(os.Args[0], "undo-inner", arg(2))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS, AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN}}
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("undo: %w", err))
		}
	case "undo-inner":
		path := arg(2)
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if hex, ok := strings.CutPrefix(line, "CapEff:"); ok {
				caps, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
				if err != nil || caps&(1<<unix.CAP_SYS_ADMIN) == 0 {
					fail(fmt.Errorf("no CAP_SYS_ADMIN in the new user namespace (%s): the attempt would prove nothing", strings.TrimSpace(hex)))
				}
			}
		}
		fmt.Println("mount_setattr:", unix.MountSetattr(unix.AT_FDCWD, path, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}))
		fmt.Println("remount:", unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND, ""))
		fmt.Println("umount:", unix.Unmount(path, unix.MNT_DETACH))
		var st unix.Statfs_t
		if err := unix.Statfs(path, &st); err != nil {
			fail(err)
		}
		if st.Flags&unix.ST_RDONLY != 0 {
			fail(fmt.Errorf("%s is still read-only", path))
		}
		done(nil)
	case "wait":
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
	default:
		fail(fmt.Errorf("unknown subcommand"))
	}
}

func done(err error) {
	if err != nil {
		fail(err)
	}
	fmt.Println("ok")
}

func fail(err error) {
	fmt.Println(err)
	os.Exit(1)
}

// ioctl opens path for reading only (a terminal's ioctls need no more)
// and issues one request on it.
func ioctl(path, req string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	switch req {
	case "tcgets":
		_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
	case "tiocsti":
		c := byte('#')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		if errno != 0 {
			err = errno
		}
	default:
		return fmt.Errorf("unknown request %q", req)
	}
	if err != nil {
		return fmt.Errorf("ioctl: %w", err)
	}
	return nil
}

// udpEcho sends a datagram to addr and waits for it to come back.
func udpEcho(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if string(buf[:n]) != "ping" {
		return fmt.Errorf("got %q back", buf[:n])
	}
	return nil
}

// loopback checks that the loopback interface works: a TCP connection
// and a UDP datagram to a listener of this process on 127.0.0.1.
func loopback() error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	c, err := net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
	if err != nil {
		return err
	}
	c.Close()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 16)
		n, from, err := pc.ReadFrom(buf)
		if err == nil {
			pc.WriteTo(buf[:n], from)
		}
	}()
	return udpEcho(pc.LocalAddr().String())
}

// escape leaves a survivor behind the way a hostile program would, and
// returns once it runs: in a new session (setsid), in a process group of
// its own (setpgid), or through a child in a new session that starts it
// and exits (daemon, a double fork).
func escape(how string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	var cmd *exec.Cmd
	switch how {
	case "setsid":
		cmd = exec.Command(os.Args[0], "survive")
		cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	case "setpgid":
		cmd = exec.Command(os.Args[0], "survive")
		cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	case "daemon":
		cmd = exec.Command(os.Args[0], "spawn")
		cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	default:
		return fmt.Errorf("unknown escape %q", how)
	}
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	if how == "daemon" {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("the middle process: %w", err)
		}
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "up\n" {
		return fmt.Errorf("the survivor did not report: %q %v", line, err)
	}
	return nil
}

// waitForever blocks in a system call (not in the Go scheduler, which
// would call a process with nothing left to run deadlocked).
func waitForever() {
	for {
		unix.Pause()
	}
}
func pid(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return n
}

// int80Socket makes socket(AF_UNIX, SOCK_STREAM, 0) through the i386
// system call entry, which the sandbox's seccomp filter must not let
// through: the system call numbers differ there.
func int80Socket() error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("int80 is for amd64")
	}
	const i386Socket = 359
	r := int32(int80(i386Socket, unix.AF_UNIX, unix.SOCK_STREAM, 0))
	if r < 0 {
		return unix.Errno(-r)
	}
	unix.Close(int(r))
	return nil
}

// defaultACL encodes a POSIX ACL (the kernel's xattr form: a version, then
// tag, permissions and id per entry, sorted by tag) granting uid
// everything, for system.posix_acl_default.
func defaultACL(uid uint32) []byte {
	const undefined = 0xffffffff
	entries := []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 7, undefined}, {0x02, 7, uid}, {0x04, 7, undefined}, {0x10, 7, undefined}, {0x20, 7, undefined}}
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}
