package subprocess_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// tiocsti tries to type into the terminal of whoever runs it, as a
// hostile program would: through /dev/tty, then through whatever
// terminal its standard streams are. It prints what happened and exits 0
// when a character was queued.
func tiocsti() int {
	inject := func(fd int) error {
		b := byte(' ')
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSTI, uintptr(unsafe.Pointer(&b))); errno != 0 {
			return errno
		}
		return nil
	}
	injected := false
	if fd, err := syscall.Open("/dev/tty", syscall.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		fmt.Printf("open /dev/tty: %v\n", err)
	} else if err := inject(fd); err != nil {
		fmt.Printf("TIOCSTI on /dev/tty: %v\n", err)
	} else {
		fmt.Println("typed through /dev/tty")
		injected = true
	}
	for fd := 0; fd <= 2; fd++ {
		if err := inject(fd); err == nil {
			fmt.Printf("typed through fd %d\n", fd)
			injected = true
		}
	}
	if injected {
		return 0
	}
	return 3
}

// scriptCommand returns script(1), which gives the command it runs a
// pseudo-terminal as its controlling terminal; it skips the test when
// there is none, unless CI is set.
func scriptCommand(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("script(1) (util-linux / bsdutils) is needed:", err)
		}
		t.Skip("no script(1) to give the test a terminal")
	}
	return path
}

// A program Run starts has no controlling terminal: under a terminal,
// it cannot open /dev/tty or type into it, while the same program run
// directly can (the control, which proves the attack is real).
func TestProgramsHaveNoControllingTerminal(t *testing.T) {
	script := scriptCommand(t)
	tests := []struct {
		name, helper string
		typed        bool
		says         string
	}{
		{name: "directly under a terminal", helper: "tiocsti", typed: true, says: "typed through /dev/tty"},
		{name: "through Run", helper: "run-tiocsti", says: "open /dev/tty: no such device or address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			result := t.TempDir() + "/result"
			cmd := exec.Command(script, "-qec", "'"+os.Args[0]+"' -test.run='^$' > /dev/null", "/dev/null")
			cmd.Env = append(os.Environ(), helperEnv+"="+tt.helper, resultEnv+"="+result)
			if tt.helper == "tiocsti" {
				// The program's own words go to the file directly.
				cmd.Args[2] = "'" + os.Args[0] + "' > '" + result + "'"
			}
			out, err := cmd.CombinedOutput()
			raw, readErr := os.ReadFile(result)
			if readErr != nil {
				t.Fatalf("no result (%v); script: %v\n%s", readErr, err, out)
			}
			got := string(raw)
			if typed := strings.Contains(got, "typed"); typed != tt.typed {
				t.Fatalf("typed into the terminal: %t, want %t; the program said:\n%s", typed, tt.typed, got)
			}
			if !strings.Contains(got, tt.says) {
				t.Errorf("the program said:\n%s\nwant %q", got, tt.says)
			}
		})
	}
}
