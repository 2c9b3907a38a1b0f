// Command sbhelper is what the sandbox tests run inside the sandbox. Each
// subcommand tries one thing and prints "ok" or the error; it exits 0 when
// the attempt succeeded and 1 when it did not.
//
//	sbhelper write PATH        create PATH and write to it
//	sbhelper connect ADDR      open a TCP connection to ADDR
//	sbhelper setns PATH        enter the network namespace at PATH
//	sbhelper caps              print the capability sets
//	sbhelper tmpdir            print $TMPDIR after writing a file in it
//	sbhelper child ARGS...     run sbhelper ARGS... as a child, relay its output and status
//	sbhelper env NAME          print $NAME
//	sbhelper writeenv NAME F   create $NAME (and parents) and write F in it
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

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
			if strings.HasPrefix(line, "CapEff:") || strings.HasPrefix(line, "CapBnd:") || strings.HasPrefix(line, "CapAmb:") {
				fmt.Println(strings.Join(strings.Fields(line), " "))
			}
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
