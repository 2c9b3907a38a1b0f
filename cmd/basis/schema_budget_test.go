//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// explodingWorkspace is a workspace whose tool deep has a schema with two
// anyOf branches recursing through the same $ref: a failing input nested
// 40 deep takes 2^40 evaluations, hours of CPU without a bound.
func explodingWorkspace(t *testing.T) (ws, marker string) {
	t.Helper()
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {"deep": {
		"description": "Has a schema that explodes.",
		"input_schema": {"$defs": {"n": {"anyOf": [
			{"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}},
			{"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}}
		]}}, "properties": {"x": {"$ref": "#/$defs/n"}}},
		"command": ["./.basis/tools/mark.sh"]}}}`)
	marker = filepath.Join(ws, "ran")
	write(t, filepath.Join(ws, ".basis/tools/mark.sh"), "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(filepath.Join(ws, ".basis/tools/mark.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws, marker
}

// explodingInput fails at the bottom of depth objects; pad adds a string
// of that many bytes, which the schema does not look at.
func explodingInput(depth, pad int) string {
	return `{"pad": "` + strings.Repeat("a", pad) + `", "x": ` + strings.Repeat(`{"x": `, depth) + "1" + strings.Repeat("}", depth) + "}"
}

func basisCommand(ws string, args ...string) *exec.Cmd {
	cmd := exec.Command(basisBinary, append([]string{"-C", ws}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
	return cmd
}

// TestExplodingSchemaIsRefused: basis call refuses the input within the
// check's budget, with exit status 3, and the program never runs; for a
// small input, and for the largest input a call may carry, which has the
// largest budget. The budget is capped to about a second of checking, so
// no check runs long enough to need a signal to stop it (the check's use
// of the context is tested in inputschema and the runtime).
func TestExplodingSchemaIsRefused(t *testing.T) {
	tests := []struct {
		name  string
		input string
	}{
		{"small", explodingInput(40, 0)},
		{"largest", explodingInput(40, 4<<20-1024)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, marker := explodingWorkspace(t)
			input := filepath.Join(ws, "input.json")
			write(t, input, tt.input)
			cmd := basisCommand(ws, "call", "deep", "@"+input, "--approve", "allow")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatal("basis call was still checking the input after 60 s")
			}
			if got := cmd.ProcessState.ExitCode(); got != exitRefused {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, exitRefused, stderr.String())
			}
			if want := "validating this input against deep's schema takes more than "; !strings.Contains(stdout.String()+stderr.String(), want) {
				t.Errorf("output does not say %q:\nstdout: %s\nstderr: %s", want, stdout.String(), stderr.String())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the tool ran")
			}
		})
	}
}
