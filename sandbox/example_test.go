//go:build linux

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/basis-go/basis/sandbox"
)

// A host confines a program it starts: Main at the top of main (here the
// test binary's TestMain calls it), then Prepare on the command.
func Example() {
	// The operator's config: spawn may use the network, nothing else.
	config, err := sandbox.ParseConfig("sandbox.json", []byte(`{"schema": 1, "spawn": {"network": true}}`), os.Getenv("HOME"))
	if err != nil {
		fmt.Println(err)
		return
	}
	policy := config.Policy("lint", false) // a declared tool that did not ask for the network
	workspace, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(workspace)

	sb, err := sandbox.New(policy, workspace)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := sb.Describe("")
	subject, _ := json.Marshal(map[string]any{"mode": d.Mode, "network": d.Network})
	fmt.Println(string(subject))

	cmd := exec.Command("/bin/sh", "-c", "echo hi > inside.txt && echo hi > /etc/outside.txt")
	cmd.Dir = workspace
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start, release, err := sb.Prepare(cmd)
	if err != nil {
		fmt.Println(err) // e.g. sandbox unavailable: ...
		return
	}
	defer release()
	if err := start(); err == nil {
		_ = cmd.Wait()
	}
	_, statErr := os.Stat(workspace + "/inside.txt")
	fmt.Println("wrote inside:", statErr == nil)
	fmt.Println("refused outside:", strings.Contains(out.String(), "Permission denied"))
	// Output:
	// {"mode":"workspace-write","network":"none"}
	// wrote inside: true
	// refused outside: true
}
