//go:build unix

package declared_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/subprocess"
	"github.com/google/go-cmp/cmp"
)

// confiner answers with a confinement that says readOnly, whose run fails
// with the given refusal line.
func confiner(readOnly bool, refusal string) subprocess.Confiner {
	return func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
		return &subprocess.Confinement{
			Confine:  func(cmd *exec.Cmd) (func() error, func(), error) { return cmd.Start, func() {}, nil },
			Subject:  json.RawMessage(`{"mode":"read-only"}`),
			ReadOnly: readOnly,
			Refusal:  refusal,
		}, nil
	}
}

// Only an entry that says "sandbox": "read-only", confined by the host's
// read-only sandbox, which reports the kernel holds it so, is side effect
// none; every other combination is asked about like any other call.
func TestReadOnlySideEffect(t *testing.T) {
	tests := []struct {
		name      string
		entry     map[string]any
		sandbox   subprocess.Confiner
		readOnly  subprocess.Confiner
		want      contract.SideEffect
		wantAsked bool // the read-only hook was used
	}{
		{"read-only, held", map[string]any{"sandbox": "read-only"}, confiner(false, ""), confiner(true, ""), contract.SideEffectNone, true},
		{"read-only, the sandbox is off", map[string]any{"sandbox": "read-only"}, confiner(false, ""), confiner(false, ""), contract.SideEffectProcess, true},
		{"read-only, no read-only hook", map[string]any{"sandbox": "read-only"}, confiner(true, ""), nil, contract.SideEffectProcess, false},
		{"read-only, no sandbox at all", map[string]any{"sandbox": "read-only"}, nil, nil, contract.SideEffectProcess, false},
		{"no key: the read-only hook is not used", map[string]any{}, confiner(true, ""), confiner(true, ""), contract.SideEffectProcess, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry := map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/true"}}
			for k, v := range tt.entry {
				entry[k] = v
			}
			root := workspace(t, manifestOf(t, map[string]any{"t": entry}))
			asked := false
			ro := tt.readOnly
			if ro != nil {
				inner := ro
				ro = func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
					asked = true
					return inner(tool, network, dir)
				}
			}
			tool := loadTool(t, root, &declared.Options{Environ: pathEnv(), Sandbox: tt.sandbox, ReadOnlySandbox: ro}, "t")
			p, err := tool.AuthorizationPreview(context.Background(), callWith(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if p.SideEffect != tt.want || tool.Descriptor().SideEffect != tt.want {
				t.Errorf("side effect: preview %s, descriptor %s; want %s", p.SideEffect, tool.Descriptor().SideEffect, tt.want)
			}
			if asked != tt.wantAsked {
				t.Errorf("read-only hook asked = %v, want %v", asked, tt.wantAsked)
			}
			def, err := tool.Definition(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(def), `"side_effect":"`+tt.want.String()+`"`) {
				t.Errorf("definition %s does not record side effect %s", def, tt.want)
			}
		})
	}
}

func TestReadOnlyKeyProblems(t *testing.T) {
	tests := []struct {
		name  string
		entry map[string]any
	}{
		{"another mode", map[string]any{"sandbox": "workspace-write"}},
		{"off", map[string]any{"sandbox": "off"}},
		{"not a string", map[string]any{"sandbox": true}},
		{"with the network", map[string]any{"sandbox": "read-only", "network": true, "side_effect": "external"}},
		{"external", map[string]any{"sandbox": "read-only", "side_effect": "external"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry := map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/true"}}
			for k, v := range tt.entry {
				entry[k] = v
			}
			root := workspace(t, manifestOf(t, map[string]any{"t": entry}))
			_, err := declared.Load(context.Background(), root, &declared.Options{Environ: pathEnv()})
			var fields []string
			for _, p := range problemsOf(t, err) {
				fields = append(fields, p.Field)
			}
			if !contains(fields, "sandbox") {
				t.Errorf("problems at %v, want one at sandbox (%v)", fields, err)
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A failed program's result ends with the sandbox's refusal line; a
// successful one does not carry it.
func TestRefusalLine(t *testing.T) {
	const line = "basis: the sandbox (read-only, no network) may have refused this"
	root := workspace(t, manifestOf(t, map[string]any{
		"fail": map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/sh", "-c", "echo nope >&2; exit 3"}},
		"ok":   map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/echo", "hi"}},
	}))
	opts := &declared.Options{Environ: pathEnv(), Sandbox: confiner(false, line)}
	_, err := loadTool(t, root, opts, "fail").Execute(context.Background(), callWith(`{}`))
	var re *declared.RunError
	if !errors.As(err, &re) {
		t.Fatalf("Execute: %v, want a RunError", err)
	}
	if diff := cmp.Diff("fail exited 3: nope\n"+line, err.Error()); diff != "" {
		t.Errorf("failure text (-want +got):\n%s", diff)
	}
	res, err := loadTool(t, root, opts, "ok").Execute(context.Background(), callWith(`{}`))
	if err != nil || strings.Contains(res.Text, line) {
		t.Errorf("success: %q, %v; want no refusal line", res.Text, err)
	}
}

// A confinement that can say what the kernel refused (Refused) gives the
// line of a failed program, asked after the run; a successful one does
// not ask.
func TestRefusedLine(t *testing.T) {
	const line = "basis: the sandbox (workspace-write, no network) refused writing /x"
	root := workspace(t, manifestOf(t, map[string]any{
		"fail": map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/sh", "-c", "echo nope >&2; exit 3"}},
		"ok":   map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/echo", "hi"}},
	}))
	asked := 0
	opts := &declared.Options{Environ: pathEnv(), Sandbox: func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
		c, err := confiner(false, "basis: the sandbox may have refused this")(tool, network, dir)
		if err == nil {
			released := false
			c.Confine = func(cmd *exec.Cmd) (func() error, func(), error) {
				return cmd.Start, func() { released = true }, nil
			}
			c.Refused = func() string {
				asked++
				if !released {
					return "asked before the program was released"
				}
				return line
			}
		}
		return c, err
	}}
	_, err := loadTool(t, root, opts, "fail").Execute(context.Background(), callWith(`{}`))
	if diff := cmp.Diff("fail exited 3: nope\n"+line, fmt.Sprint(err)); diff != "" {
		t.Errorf("failure text (-want +got):\n%s", diff)
	}
	if _, err := loadTool(t, root, opts, "ok").Execute(context.Background(), callWith(`{}`)); err != nil || asked != 1 {
		t.Errorf("success: %v, Refused asked %d times in all; want no error and once (the failure)", err, asked)
	}
}
