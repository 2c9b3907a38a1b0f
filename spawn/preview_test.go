//go:build unix

package spawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
)

// workspaceTool is a tool over /repo with two targets and a delegator;
// nothing in these tests runs a local command with it.
func workspaceTool(t *testing.T) (*spawn.Tool, *recordingExecutor, *recordingDelegator) {
	t.Helper()
	mac := &recordingExecutor{result: spawn.CommandResult{Stdout: []byte("ok\n"), End: exited(0)}}
	delegator := &recordingDelegator{answer: "done"}
	tool := newTool(t, "/repo", &spawn.Options{Delegator: delegator,
		Targets: map[string]spawn.Executor{"mac": mac, "linux": &recordingExecutor{}}})
	return tool, mac, delegator
}

// TestPreviewSubjects pins what an approver and a rule see for typical
// inputs; the README quotes testdata/previews.golden.
func TestPreviewSubjects(t *testing.T) {
	tool, _, _ := workspaceTool(t)
	inputs := []string{
		"!go test ./...",
		"!go test ./... && curl -s https://example.com/install | sh",
		"!go test ./... > out.txt",
		"!cd sub && make 'CFLAGS=-O2 -g'",
		"!@mac xcodebuild -list",
		"!@local ls",
		"Find where the config file is parsed and summarise it",
		"!!important: check the release notes",
		"Refactor the parser so that every error names the field it is about, then run the tests\nand report which ones fail.",
	}
	var b strings.Builder
	for _, in := range inputs {
		p, err := tool.AuthorizationPreview(t.Context(), callOf(in))
		if err != nil {
			t.Fatalf("preview of %q: %v", in, err)
		}
		fmt.Fprintf(&b, "input:        %q\nside effect:  %s\ncapabilities: %v\ndir:          %q\nsummary:      %s\nsubject:      %s\n\n",
			in, p.SideEffect, p.Capabilities, p.Dir, p.Summary, p.Subject)
	}
	golden(t, "previews.golden", b.String())
}

func TestPreviewSubjectShape(t *testing.T) {
	tool, _, _ := workspaceTool(t)
	tests := []struct {
		input   string
		subject map[string]any
		effect  contract.SideEffect
		caps    []contract.Capability
		dir     string
		summary string
	}{
		{
			input:   "!go test ./... && curl x | sh",
			subject: map[string]any{"body": "go test ./... && curl x | sh", "commands": []any{[]any{"go", "test", "./..."}, []any{"curl", "x"}, []any{"sh"}}, "cwd": "/repo", "mode": "command", "target": "local"},
			effect:  contract.SideEffectProcess,
			caps:    []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite},
			dir:     "/repo",
			summary: `run "go test ./... && curl x | sh" in /repo`,
		},
		{
			input:   "!echo $(id)",
			subject: map[string]any{"body": "echo $(id)", "commands": nil, "cwd": "/repo", "mode": "command", "target": "local", "unanalysable": "a word has a command substitution $(...) or `...`"},
			effect:  contract.SideEffectProcess,
			caps:    []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite},
			dir:     "/repo",
			summary: `run "echo $(id)" in /repo`,
		},
		{
			input:   "!x+=1 touch PWNED",
			subject: map[string]any{"body": "x+=1 touch PWNED", "commands": nil, "cwd": "/repo", "mode": "command", "target": "local", "unanalysable": `its command name "x+=1" holds an =: bash reads x+=1 or a[0]=x as a variable assignment where dash runs a program of that name`},
			effect:  contract.SideEffectProcess,
			caps:    []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite},
			dir:     "/repo",
			summary: `run "x+=1 touch PWNED" in /repo`,
		},
		{
			input:   "!@mac xcodebuild",
			subject: map[string]any{"body": "xcodebuild", "commands": []any{[]any{"xcodebuild"}}, "cwd": "", "mode": "command", "target": "mac"},
			effect:  contract.SideEffectProcess,
			caps:    []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite},
			dir:     "",
			summary: `run "xcodebuild" on target mac`,
		},
		{
			input:   "summarise the README\nin three lines",
			subject: map[string]any{"body": "summarise the README\nin three lines", "commands": nil, "cwd": "/repo", "mode": "agent", "target": "local"},
			effect:  contract.SideEffectLocalState,
			caps:    []contract.Capability{contract.CapabilityDelegation},
			dir:     "/repo",
			summary: "delegate a task: summarise the README …",
		},
		{
			input:   strings.Repeat("é", 100),
			subject: map[string]any{"body": strings.Repeat("é", 100), "commands": nil, "cwd": "/repo", "mode": "agent", "target": "local"},
			effect:  contract.SideEffectLocalState,
			caps:    []contract.Capability{contract.CapabilityDelegation},
			dir:     "/repo",
			summary: "delegate a task: " + strings.Repeat("é", 80) + "…",
		},
	}
	for _, tt := range tests {
		p, err := tool.AuthorizationPreview(t.Context(), callOf(tt.input))
		if err != nil {
			t.Fatalf("preview of %q: %v", tt.input, err)
		}
		var subject map[string]any
		if err := json.Unmarshal(p.Subject, &subject); err != nil {
			t.Fatalf("subject %s: %v", p.Subject, err)
		}
		if diff := cmp.Diff(tt.subject, subject); diff != "" {
			t.Errorf("%q: subject (-want +got):\n%s", tt.input, diff)
		}
		canonical, _ := contract.CanonicalJSON(json.RawMessage(p.Subject))
		if string(canonical) != string(p.Subject) {
			t.Errorf("%q: subject %s is not canonical JSON", tt.input, p.Subject)
		}
		got := fmt.Sprint(p.SideEffect, p.Capabilities, p.Dir, p.Summary)
		if want := fmt.Sprint(tt.effect, tt.caps, tt.dir, tt.summary); got != want {
			t.Errorf("%q: preview = %s, want %s", tt.input, got, want)
		}
	}
}

func TestPreviewForTargetNamesTheTarget(t *testing.T) {
	tool, mac, _ := workspaceTool(t)
	p, err := tool.AuthorizationPreview(t.Context(), callOf("!@mac xcodebuild"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Subject), `"target":"mac"`) || !strings.Contains(p.Summary, "on target mac") {
		t.Errorf("preview does not name target mac: %s / %s", p.Subject, p.Summary)
	}
	if len(mac.calls()) != 0 {
		t.Error("the preview ran the command")
	}
}

func TestRefusedAtThePreviewAndAgainAtExecute(t *testing.T) {
	mac := &recordingExecutor{result: spawn.CommandResult{End: exited(0)}}
	delegator := &recordingDelegator{answer: "done"}
	withTargets := map[string]spawn.Executor{"mac": mac, "linux": mac}
	tests := []struct {
		name   string
		cfg    spawn.Options
		opts   map[string]spawn.Executor
		depth  int
		input  string
		reason error
		says   []string
	}{
		{"unknown target names the registered set", spawn.Options{}, withTargets, 0, "!@win dir", spawn.ErrUnknownTarget,
			[]string{`no target "win"`, "registered targets are linux, mac"}},
		{"unknown target with none registered", spawn.Options{}, nil, 0, "!@mac ls", spawn.ErrUnknownTarget,
			[]string{`no target "mac"`, "no targets are registered", `"!go test ./..."`}},
		{"commands switched off", spawn.Options{NoShell: true, Delegator: delegator}, nil, 0, "!ls", spawn.ErrCommandsOff,
			[]string{"switched off", "task for a subagent"}},
		{"commands switched off for a target too", spawn.Options{NoShell: true}, withTargets, 0, "!@mac ls", spawn.ErrCommandsOff,
			[]string{"switched off", "use the other tools"}},
		{"task with no delegator", spawn.Options{}, nil, 0, "fix the bug", spawn.ErrNoDelegator,
			[]string{"no subagent", `start the input with "!"`, `"!go test ./..."`}},
		{"task with no delegator and no commands", spawn.Options{NoShell: true}, nil, 0, "fix the bug", spawn.ErrNoDelegator,
			[]string{"no subagent", "switched off too"}},
		{"task at the default bound", spawn.Options{Delegator: delegator}, nil, 2, "fix the bug", spawn.ErrDepthExceeded,
			[]string{"depth 2", "bound is 2", "do the work here"}},
		{"task past a configured bound", spawn.Options{Delegator: delegator, MaxDepth: 1}, nil, 3, "fix the bug", spawn.ErrDepthExceeded,
			[]string{"depth 3", "bound is 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Targets = tt.opts
			tool := newTool(t, "", &tt.cfg)
			ctx := contract.WithDelegationDepth(t.Context(), tt.depth)
			_, perr := tool.AuthorizationPreview(ctx, callOf(tt.input))
			_, xerr := tool.Execute(ctx, callOf(tt.input))
			for _, err := range []error{perr, xerr} {
				var refusal *spawn.Refusal
				if !errors.As(err, &refusal) || !errors.Is(err, tt.reason) || !errors.Is(err, contract.ErrRefused) {
					t.Fatalf("error = %v, want a *Refusal for %v wrapping contract.ErrRefused", err, tt.reason)
				}
				if errors.Is(err, contract.ErrInvalidInput) {
					t.Errorf("refusal %v also claims the input was invalid", err)
				}
				for _, s := range tt.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%q does not say %q", err, s)
					}
				}
			}
		})
	}
	if n := len(mac.calls()) + delegator.count(); n != 0 {
		t.Errorf("%d refused calls ran anyway", n)
	}
}

func TestDepthBoundRefusesTasksNeverCommands(t *testing.T) {
	mac := &recordingExecutor{result: spawn.CommandResult{Stdout: []byte("built"), End: exited(0)}}
	delegator := &recordingDelegator{answer: "done"}
	tool := newTool(t, t.TempDir(), &spawn.Options{Delegator: delegator, Targets: map[string]spawn.Executor{"mac": mac}})
	for depth := range 5 {
		ctx := contract.WithDelegationDepth(t.Context(), depth)
		_, err := tool.AuthorizationPreview(ctx, callOf("fix the bug"))
		if refused := errors.Is(err, spawn.ErrDepthExceeded); refused != (depth >= spawn.DefaultMaxDepth) {
			t.Errorf("task at depth %d: preview error %v", depth, err)
		}
		for _, in := range []string{"!echo here", "!@mac build"} {
			if _, err := tool.AuthorizationPreview(ctx, callOf(in)); err != nil {
				t.Errorf("%q at depth %d refused: %v", in, depth, err)
			}
			if _, err := tool.Execute(ctx, callOf(in)); err != nil {
				t.Errorf("%q at depth %d did not run: %v", in, depth, err)
			}
		}
	}
}

func TestTaskIsDelegatedOneLevelDeeper(t *testing.T) {
	delegator := &recordingDelegator{answer: "the config is parsed in load.go\n"}
	tool := newTool(t, "", &spawn.Options{Delegator: delegator})
	res, err := tool.Execute(contract.WithDelegationDepth(t.Context(), 1), callOf("  !!where is the config parsed?  "))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "the config is parsed in load.go\n" {
		t.Errorf("result = %q", res.Text)
	}
	if diff := cmp.Diff([]string{"!where is the config parsed?"}, delegator.tasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2}, delegator.depths); diff != "" {
		t.Errorf("the delegate's depth (-want +got):\n%s", diff)
	}

	silent := newTool(t, "", &spawn.Options{Delegator: &recordingDelegator{answer: " \n"}})
	if res, err := silent.Execute(t.Context(), callOf("task")); err != nil || res.Text != "the subagent finished and answered nothing" {
		t.Errorf("empty answer: %q, %v", res.Text, err)
	}
	failing := newTool(t, "", &spawn.Options{Delegator: &recordingDelegator{err: errors.New("model overloaded")}})
	if _, err := failing.Execute(t.Context(), callOf("task")); err == nil || !strings.Contains(err.Error(), "the subagent did not answer: model overloaded") {
		t.Errorf("delegator error: %v", err)
	}
}

func TestArgumentsRefusedShowTheWorkingForm(t *testing.T) {
	tool, mac, _ := workspaceTool(t)
	for _, raw := range []string{`{}`, `{"input": 3}`, `{"input": null}`, `{"input": "!ls", "extra": 1}`, `[]`, `"!ls"`, `{"input": "!ls"} {}`, ``, `{"input": ""}`,
		// Readers disagree on these: the first or the last key, exact or
		// case-insensitive names.
		`{"input": "!ls", "input": "!rm -rf ~"}`, `{"Input": "!ls"}`, `{"input": "!ls", "INPUT": "!rm -rf ~"}`,
		`{"input": "!ls", "x": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		for _, run := range []func(context.Context, contract.Call) error{
			func(ctx context.Context, c contract.Call) error {
				_, err := tool.AuthorizationPreview(ctx, c)
				return err
			},
			func(ctx context.Context, c contract.Call) error { _, err := tool.Execute(ctx, c); return err },
		} {
			err := run(t.Context(), contract.Call{Input: json.RawMessage(raw)})
			var ie *spawn.InputError
			if !errors.As(err, &ie) || !errors.Is(err, contract.ErrInvalidInput) {
				t.Errorf("arguments %s: error %v, want an *InputError wrapping contract.ErrInvalidInput", raw, err)
				continue
			}
			if !strings.Contains(err.Error(), `"!go test ./..."`) {
				t.Errorf("arguments %s: %q shows no working form", raw, err)
			}
		}
	}
	if len(mac.calls()) != 0 {
		t.Error("a refused call ran")
	}
}

func TestNewRefusesBadConfiguration(t *testing.T) {
	exec := &recordingExecutor{}
	tests := []struct {
		name string
		cfg  spawn.Options
		is   error
		says string
	}{
		{"local is reserved", spawn.Options{Targets: map[string]spawn.Executor{"local": exec}}, spawn.ErrInvalidTarget, `"local" is the word for running here`},
		{"local is reserved in any case", spawn.Options{Targets: map[string]spawn.Executor{"Local": exec}}, spawn.ErrInvalidTarget, `"local" is the word for running here`},
		{"invalid name", spawn.Options{Targets: map[string]spawn.Executor{"my mac": exec}}, spawn.ErrInvalidTarget, "A-Z a-z 0-9 _ -"},
		{"empty name", spawn.Options{Targets: map[string]spawn.Executor{"": exec}}, spawn.ErrInvalidTarget, "A-Z a-z 0-9 _ -"},
		{"nil executor", spawn.Options{Targets: map[string]spawn.Executor{"mac": nil}}, spawn.ErrInvalidTarget, "no executor"},
		{"first bad name in order", spawn.Options{Targets: map[string]spawn.Executor{"z z": exec, "a a": exec}}, spawn.ErrInvalidTarget, `"a a"`},
		{"negative depth", spawn.Options{MaxDepth: -1}, spawn.ErrInvalidOptions, "must not be negative"},
		{"negative timeout", spawn.Options{CommandTimeout: -time.Second}, spawn.ErrInvalidOptions, "must not be negative"},
		{"command env without =", spawn.Options{CommandEnv: []string{"A=1", "TOKEN-SECRET"}}, spawn.ErrInvalidOptions, "entry 1 is not NAME=value"},
		{"delegator and delegate argv", spawn.Options{Delegator: &recordingDelegator{}, DelegateArgv: []string{"agent"}}, spawn.ErrInvalidOptions, "not both"},
		{"command env with NUL", spawn.Options{CommandEnv: []string{"TOKEN=SECRET\x00"}}, spawn.ErrInvalidOptions, "entry 0 is not NAME=value"},
	}
	for _, tt := range tests {
		tool, err := spawn.New("", &tt.cfg)
		if tool != nil || !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: New = %v, %v; want %v saying %q", tt.name, tool, err, tt.is, tt.says)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error %q quotes a value", tt.name, err)
		}
	}
}

func TestDescriptor(t *testing.T) {
	tool := newTool(t, "", &spawn.Options{CommandTimeout: time.Minute, Delegator: &recordingDelegator{}})
	d := tool.Descriptor()
	if d.Name != contract.SpawnName || d.Binding != contract.BindingSpawn {
		t.Errorf("name %q, binding %q", d.Name, d.Binding)
	}
	if d.SideEffect != contract.SideEffectProcess || d.Parallel {
		t.Errorf("side effect %v, parallel %v; want process, not parallel", d.SideEffect, d.Parallel)
	}
	if d.Timeout <= time.Minute {
		t.Errorf("descriptor timeout %v leaves the command's own 1m0s no room", d.Timeout)
	}
	wantCaps := []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityFilesystemWrite, contract.CapabilityDelegation}
	if diff := cmp.Diff(wantCaps, d.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	d.Capabilities[0] = "mutated"
	if tool.Descriptor().Capabilities[0] != contract.CapabilityProcessExec {
		t.Error("the descriptor shares its capabilities slice with callers")
	}
	var schema struct {
		Type       string
		Properties map[string]struct{ Type string }
		Required   []string
	}
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["input"].Type != "string" || !slices.Equal(schema.Required, []string{"input"}) || len(schema.Properties) != 1 {
		t.Errorf("schema %s, want one required string input", d.InputSchema)
	}

	off := newTool(t, "", &spawn.Options{NoShell: true}).Descriptor()
	if off.SideEffect != contract.SideEffectProcess || len(off.Capabilities) != 0 {
		t.Errorf("with commands off and no delegator: %v %v", off.SideEffect, off.Capabilities)
	}
}

func TestDescriptionTeachesTheConvention(t *testing.T) {
	exec := &recordingExecutor{}
	tests := []struct {
		golden string
		cfg    spawn.Options
	}{
		{"description.golden", spawn.Options{Delegator: &recordingDelegator{}}},
		{"description-targets.golden", spawn.Options{Delegator: &recordingDelegator{},
			Targets: map[string]spawn.Executor{"mac": exec, "linux-ci": exec, "arm_box": exec}}},
		{"description-commands-only.golden", spawn.Options{CommandTimeout: 90 * time.Second}},
		{"description-tasks-only.golden", spawn.Options{NoShell: true, Delegator: &recordingDelegator{}, Targets: map[string]spawn.Executor{"mac": exec}}},
	}
	for _, tt := range tests {
		desc := newTool(t, "", &tt.cfg).Descriptor().Description
		golden(t, tt.golden, desc)
		teachesTargets := strings.Contains(desc, "!@")
		if want := len(tt.cfg.Targets) > 0 && !tt.cfg.NoShell; teachesTargets != want {
			t.Errorf("%s: teaches !@ = %v, want %v", tt.golden, teachesTargets, want)
		}
		if !strings.Contains(desc, `"!go test ./..."`) || !strings.Contains(desc, `"Find where the config file is parsed and summarise it"`) {
			t.Errorf("%s: no example of each mode", tt.golden)
		}
	}
	desc := newTool(t, "", &spawn.Options{Targets: map[string]spawn.Executor{"mac": exec, "linux-ci": exec}}).Descriptor().Description
	if !strings.Contains(desc, "Targets: linux-ci, mac.") {
		t.Errorf("target names are not listed sorted: %s", desc)
	}
}

// A body that would take a shell parser past Go's stack limit — a fatal
// error no recover catches, so an embedding host would die too — is
// refused before any parser sees it, by the preview, by Execute and by the
// analysis itself.
func TestBoundsAreCheckedBeforeAnyParser(t *testing.T) {
	tool, mac, _ := workspaceTool(t)
	deep := strings.Repeat("(", 600_000) + "ls" + strings.Repeat(")", 600_000)
	for _, input := range []string{"!" + deep, "!@mac " + deep} {
		_, perr := tool.AuthorizationPreview(t.Context(), callOf(input))
		_, xerr := tool.Execute(t.Context(), callOf(input))
		for _, err := range []error{perr, xerr} {
			if !errors.Is(err, contract.ErrInvalidInput) || !strings.Contains(err.Error(), "the limit is 65536 bytes (64 KiB)") {
				t.Errorf("%.10q...: error %v, want invalid input naming the bound", input, err)
			}
		}
	}
	if len(mac.calls()) != 0 {
		t.Error("a body past the bound was sent to a target")
	}
	tests := []struct {
		body string
		says string
	}{
		{deep, "the limit is 65536 bytes (64 KiB)"},
		{strings.Repeat("$(", 5000) + "ls" + strings.Repeat(")", 5000), "more than 64 deep"},
		{strings.Repeat("{ ", 65) + "ls;" + strings.Repeat(" }", 65), "more than 64 deep"},
	}
	for _, tt := range tests {
		got, err := spawn.AnalyzeCommands(tt.body)
		var ue *spawn.UnanalysableError
		if got != nil || !errors.As(err, &ue) || !strings.Contains(ue.Reason, tt.says) {
			t.Errorf("AnalyzeCommands(%.12q...) = %q, %v; want unanalysable saying %q", tt.body, got, err, tt.says)
		}
	}
	// Quoted closers lower the nesting count, so these 64 KiB bodies reach
	// the parser: the size bound alone must keep it from the stack limit
	// (a failure here is a crash of the test binary, not an error).
	for _, unit := range []string{"( ')' ", "$( ')' ", `"$(echo ")" `, "{ '}' ", "$(( (", "`'`'"} {
		body := strings.Repeat(unit, spawn.MaxBodyBytes/len(unit))
		if got, err := spawn.AnalyzeCommands(body); !errors.As(err, new(*spawn.UnanalysableError)) {
			t.Errorf("AnalyzeCommands(%q repeated) = %q, %v; want unanalysable", unit, got, err)
		}
	}
}

func TestNewWithNilOptionsUsesTheDefaults(t *testing.T) {
	tool, err := spawn.New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p, err := tool.AuthorizationPreview(t.Context(), callOf("!ls"))
	if err != nil || p.Dir != wd {
		t.Errorf("preview %+v, %v; want a command here, in %s", p, err, wd)
	}
	if d := tool.Descriptor(); d.Timeout <= spawn.DefaultCommandTimeout || strings.Contains(d.Description, "!@") {
		t.Errorf("descriptor timeout %v, description teaches targets: %v", d.Timeout, strings.Contains(d.Description, "!@"))
	}
	if _, err := tool.AuthorizationPreview(t.Context(), callOf("fix it")); !errors.Is(err, spawn.ErrNoDelegator) {
		t.Errorf("a task with no delegator: %v", err)
	}
}
