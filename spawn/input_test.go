//go:build unix

package spawn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
)

func command(body string) spawn.Input { return spawn.Input{Mode: spawn.ModeCommand, Body: body} }

func task(body string) spawn.Input { return spawn.Input{Mode: spawn.ModeAgent, Body: body} }

func onTarget(target, body string) spawn.Input {
	return spawn.Input{Mode: spawn.ModeCommand, Body: body, Target: target}
}

var parseCases = []struct {
	name  string
	input string
	want  spawn.Input
}{
	{"command", "!go test ./...", command("go test ./...")},
	{"command trimmed once", "  \n!ls -la \t\n", command("ls -la")},
	{"space after the bang is dropped", "! ls", command("ls")},
	{"command keeps its inner spacing", "!echo 'a  b'   c", command("echo 'a  b'   c")},
	{"multi-line command", "!cd sub\ngo test", command("cd sub\ngo test")},
	{"bang inside a command", "!echo !x", command("echo !x")},
	{"command starting with bang", "! !x", command("!x")},
	{"command starting with at", "! @x", command("@x")},
	{"double bang is a task starting with bang", "!!important: read this", task("!important: read this")},
	{"double bang alone", "!!", task("!")},
	{"double bang then space", "!! spaced", task("! spaced")},
	{"triple bang", "!!!x", task("!!x")},
	{"target", "!@mac xcodebuild", onTarget("mac", "xcodebuild")},
	{"target with tab", "!@mac\txcodebuild -list", onTarget("mac", "xcodebuild -list")},
	{"target with newline", "!@mac\nxcodebuild", onTarget("mac", "xcodebuild")},
	{"target body spacing after the separator", "!@mac    a  b", onTarget("mac", "a  b")},
	{"target name characters", "!@Linux_CI-2 uname", onTarget("Linux_CI-2", "uname")},
	{"local is here", "!@local ls", command("ls")},
	{"task", "fix the failing test", task("fix the failing test")},
	{"task trimmed", "  fix it \n", task("fix it")},
	{"multi-line task", "first\nsecond", task("first\nsecond")},
	{"bang later in a task", "say hi!", task("say hi!")},
	{"at without bang is a task", "@mac ls", task("@mac ls")},
	{"command at the size bound", "!" + strings.Repeat("x", spawn.MaxBodyBytes), command(strings.Repeat("x", spawn.MaxBodyBytes))},
	{"command at the nesting bound", "!" + strings.Repeat("(", 64) + "ls" + strings.Repeat(")", 64) + strings.Repeat(" (ls)", 100),
		command(strings.Repeat("(", 64) + "ls" + strings.Repeat(")", 64) + strings.Repeat(" (ls)", 100))},
	{"a task is not bounded: no shell parses it", strings.Repeat("(", 100_000), task(strings.Repeat("(", 100_000))},
}

func TestParse(t *testing.T) {
	for _, tt := range parseCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spawn.Parse(tt.input)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.input, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.input, diff)
			}
			again, err := spawn.Parse(got.String())
			if err != nil || again != got {
				t.Errorf("Parse(%q.String() = %q) = %+v, %v; want the same Input", tt.input, got.String(), again, err)
			}
		})
	}
}

func TestParseRefusalsShowTheWorkingForm(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		problem string
		form    string
	}{
		{"empty", "", "empty", `"!go test ./..."`},
		{"blank", " \n\t ", "empty", `"!go test ./..."`},
		{"bang alone", "!", `"!" alone`, `"!go test ./..."`},
		{"bang and spaces", "  !   ", `"!" alone`, `"!go test ./..."`},
		{"bang at alone", "!@", "needs a target name and a command", `"!@mac xcodebuild -list"`},
		{"space after bang at", "!@ x", "no space", `"!@mac xcodebuild -list"`},
		{"target with no command", "!@mac", `target "mac" needs a command`, `"!@mac xcodebuild -list"`},
		{"target with only spaces", "!@mac   ", `target "mac" needs a command`, `"!@mac xcodebuild -list"`},
		{"local with no command", "!@local", `target "local" needs a command`, `"!@mac xcodebuild -list"`},
		{"bad target name", "!@my.mac ls", `"my.mac" may hold only`, `"!@mac xcodebuild -list"`},
		{"target name too long", "!@" + strings.Repeat("m", 65) + " ls", "65 characters is too long", `"!@mac xcodebuild -list"`},
		{"NUL", "!echo a\x00b", "NUL byte", `"!go test ./..."`},
		// Bounds, checked before any parser: 600,000 nested parentheses
		// once overflowed the parser's stack, a fatal error.
		{"command past 64 KiB", "!" + strings.Repeat("(", 600_000) + "ls" + strings.Repeat(")", 600_000), "1200002 bytes; the limit is 65536 bytes (64 KiB)", "script"},
		{"command on a target past 64 KiB", "!@mac echo " + strings.Repeat("x", spawn.MaxBodyBytes), "the limit is 65536 bytes", "script"},
		{"command nested too deep", "!" + strings.Repeat("(", 65) + "ls" + strings.Repeat(")", 65), "more than 64 deep", "script"},
		{"command nested too deep in quotes", "!echo '" + strings.Repeat("{", 65) + "'", "more than 64 deep", "script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spawn.Parse(tt.input)
			var ie *spawn.InputError
			if !errors.Is(err, contract.ErrInvalidInput) || !errors.As(err, &ie) {
				t.Fatalf("Parse(%.80q) = %+v, %v; want an *InputError wrapping contract.ErrInvalidInput", tt.input, got, err)
			}
			if !strings.Contains(ie.Problem, tt.problem) {
				t.Errorf("problem %q does not say %q", ie.Problem, tt.problem)
			}
			if !strings.Contains(err.Error(), tt.form) {
				t.Errorf("error %q does not show the working form %s", err, tt.form)
			}
		})
	}
}

func TestInputString(t *testing.T) {
	tests := []struct {
		in   spawn.Input
		want string
	}{
		{command("ls"), "!ls"},
		{onTarget("mac", "ls -la"), "!@mac ls -la"},
		{task("fix it"), "fix it"},
		{task("!important"), "!!important"},
		{command("! false"), "! ! false"},
		{command("@x"), "! @x"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The modes are the words a preview's subject carries.
	if got := string(spawn.ModeCommand) + " " + string(spawn.ModeAgent); got != "command agent" {
		t.Errorf("mode words = %q", got)
	}
}

// FuzzParse checks that Parse never panics, that what it accepts is well
// formed, and that an accepted input is stable when re-serialized:
// Parse(in.String()) gives back in.
func FuzzParse(f *testing.F) {
	for _, tt := range parseCases {
		f.Add(tt.input)
	}
	for _, s := range []string{"", "!", "!@", "!@ x", "!@mac", "!@local", "!@l\u00e9 x", "!\u00a0ls", "\u2003!!x\u2003", "!@mac\u00a0ls", "\xff!", "!@a\xffb c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := spawn.Parse(s)
		if err != nil {
			if !errors.Is(err, contract.ErrInvalidInput) {
				t.Fatalf("Parse(%q) error %v does not wrap contract.ErrInvalidInput", s, err)
			}
			return
		}
		switch {
		case in.Mode != spawn.ModeCommand && in.Mode != spawn.ModeAgent:
			t.Fatalf("Parse(%q) mode %v", s, in.Mode)
		case in.Body == "" || strings.IndexByte(in.Body, 0) >= 0:
			t.Fatalf("Parse(%q) body %q", s, in.Body)
		case in.Target != "" && (in.Mode != spawn.ModeCommand || !contract.ValidName(in.Target) || in.Target == spawn.LocalTarget):
			t.Fatalf("Parse(%q) target %q", s, in.Target)
		}
		again, err := spawn.Parse(in.String())
		if err != nil || again != in {
			t.Fatalf("Parse(%q) = %+v; re-serialized as %q it parses as %+v, %v", s, in, in.String(), again, err)
		}
		if in.Mode == spawn.ModeCommand {
			_, _ = spawn.AnalyzeCommands(in.Body) // must not panic
		}
	})
}
