//go:build unix

package spawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
)

func call(input string) contract.Call {
	raw, _ := json.Marshal(map[string]string{"input": input})
	return contract.Call{ID: "call_1", Input: raw}
}

// The preview says what a call is about to do, before anything runs. Its
// commands list lets a rule allow "go test ./..." without allowing what a
// model might chain after it.
func Example() {
	tool, err := spawn.New("/repo", nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, input := range []string{"!go test ./...", "!go test ./... && curl -s x | sh", "!echo $HOME"} {
		preview, _ := tool.AuthorizationPreview(ctx, call(input))
		fmt.Println(preview.Summary)
		fmt.Println(string(preview.Subject))
	}
	// No Delegator was configured, so a task is refused before any
	// approver is asked.
	_, err = tool.AuthorizationPreview(ctx, call("fix the failing test"))
	fmt.Println(err)
	// Output:
	// run "go test ./..." in /repo
	// {"body":"go test ./...","commands":[["go","test","./..."]],"cwd":"/repo","mode":"command","target":"local"}
	// run "go test ./... && curl -s x | sh" in /repo
	// {"body":"go test ./... && curl -s x | sh","commands":[["go","test","./..."],["curl","-s","x"],["sh"]],"cwd":"/repo","mode":"command","target":"local"}
	// run "echo $HOME" in /repo
	// {"body":"echo $HOME","commands":null,"cwd":"/repo","mode":"command","target":"local","unanalysable":"a word has a parameter expansion ($NAME)"}
	// spawn: there is no subagent here to take a task; to run a command instead, start the input with "!", as in "!go test ./..."
}

func ExampleTool_Execute() {
	tool, err := spawn.New("/", &spawn.Options{CommandEnv: []string{"GREETING=hello"}})
	if err != nil {
		panic(err)
	}
	res, err := tool.Execute(context.Background(), call(`!echo "$GREETING"; echo warning >&2`))
	fmt.Println(res.Text, err)

	_, err = tool.Execute(context.Background(), call(`!echo partial; exit 2`))
	fmt.Println(err)
	// Output:
	// stdout:
	// hello
	// stderr:
	// warning <nil>
	// spawn: the command exited with code 2
	// partial
}

func ExampleParse() {
	for _, input := range []string{"!go test ./...", "!@mac xcodebuild -list", "!!important: read this first", "summarise the README", "!@ mac ls"} {
		in, err := spawn.Parse(input)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s %q target=%q\n", in.Mode, in.Body, in.Target)
	}
	// Output:
	// command "go test ./..." target=""
	// command "xcodebuild -list" target="mac"
	// agent "!important: read this first" target=""
	// agent "summarise the README" target=""
	// spawn: "!@" must be followed directly by a target name, with no space; write "!@mac xcodebuild -list": the target name right after "!@", a space, then the command
}

// A CommandDelegator makes any agent command line a subagent: the task on
// its stdin, the answer on its stdout, and its depth in BASIS_SPAWN_DEPTH.
func ExampleCommandDelegator() {
	delegate := spawn.CommandDelegator{
		Argv: []string{"/bin/sh", "-c", `echo "depth $BASIS_SPAWN_DEPTH: $(tr a-z A-Z)"`},
		Env:  []string{"PATH=" + os.Getenv("PATH")},
	}
	tool, err := spawn.New("/", &spawn.Options{Delegator: delegate})
	if err != nil {
		panic(err)
	}
	res, err := tool.Execute(context.Background(), call("shout this"))
	fmt.Println(res.Text, err)
	// Output:
	// depth 1: SHOUT THIS <nil>
}

// remoteExecutor stands for a host's executor on another machine: it
// reports how the command ended in spawn's own CommandResult.
type remoteExecutor struct{}

func (remoteExecutor) RunCommand(ctx context.Context, req spawn.CommandRequest) (spawn.CommandResult, error) {
	if req.Body == "xcodebuild -list" {
		return spawn.CommandResult{Stdout: []byte("Targets:\n    App\n")}, nil
	}
	return spawn.CommandResult{Stderr: []byte("xcodebuild: error: unknown scheme\n"), End: spawn.CommandEnd{ExitCode: 65}}, nil
}

// A host configures the tool once: where local commands run, their
// environment, the program that takes tasks, and the targets "!@name cmd"
// runs on. Nothing runs until a call's Execute; the previews below only
// describe. Nil options are every default.
func ExampleNew() {
	macExecutor := remoteExecutor{}                 // a host's executor on another machine
	tool, err := spawn.New("/repo", &spawn.Options{ // local commands run in /repo
		CommandEnv: []string{"GOFLAGS=-mod=mod"}, // the runtime's command environment
		Delegator: spawn.CommandDelegator{ // any agent command line takes tasks
			Argv: []string{"my-agent", "--print"},
			Dir:  "/repo",
			Env:  os.Environ(),
		},
		Targets: map[string]spawn.Executor{"mac": macExecutor}, // "!@mac cmd" runs there
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, input := range []string{"!go test ./...", "find where the config is parsed", "!@mac xcodebuild -list"} {
		preview, _ := tool.AuthorizationPreview(ctx, call(input))
		fmt.Println(preview.SideEffect, "|", preview.Summary)
	}

	res, err := tool.Execute(ctx, call("!@mac xcodebuild -list"))
	fmt.Println(res.Text, err)

	_, err = tool.Execute(ctx, call("!@mac xcodebuild -scheme Nope"))
	var failed *spawn.CommandError
	if errors.As(err, &failed) {
		fmt.Println(failed.End.ExitCode, "|", err)
	}
	// Output:
	// process | run "go test ./..." in /repo
	// local_state | delegate a task: find where the config is parsed
	// process | run "xcodebuild -list" on target mac
	// Targets:
	//     App <nil>
	// 65 | spawn: the command on target mac exited with code 65
	// xcodebuild: error: unknown scheme
}
