//go:build linux

package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/basis-go/basis/e2e"
)

// A test marks what it starts with a variable of its own, so it can find
// those processes, and anything they start, in the process table later.
func ExampleWithEnv() {
	mark := "example-" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "E2E_EXAMPLE="+mark)
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return
	}
	running, _ := e2e.WithEnv("E2E_EXAMPLE", mark)
	fmt.Println("while it runs:", len(running), running[0].PID == cmd.Process.Pid)

	cmd.Process.Kill()
	cmd.Wait()
	left, _ := e2e.WithEnv("E2E_EXAMPLE", mark)
	fmt.Println("after it was stopped:", len(left))

	mem, _ := e2e.ReadMemory(os.Getpid())
	fmt.Println("this process has a peak resident size:", mem.Peak >= mem.Resident && mem.Resident > 0)
	// Output:
	// while it runs: 1 true
	// after it was stopped: 0
	// this process has a peak resident size: true
}
