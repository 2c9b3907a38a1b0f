//go:build unix

package subprocess_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/basis-go/basis/subprocess"
)

func Example() {
	res, err := subprocess.Run(context.Background(), &subprocess.Cmd{
		// No shell: tr receives its arguments as they are.
		Argv:    []string{"tr", "a-z", "A-Z"},
		Env:     subprocess.MergeEnv([]string{"PATH=" + os.Getenv("PATH")}, []string{"LANG=C"}),
		Stdin:   []byte(`{"job":"deploy"}`),
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println("bad command:", err)
		return
	}
	fmt.Println(res.Outcome)
	fmt.Println(string(res.Stdout))

	res, _ = subprocess.Run(context.Background(), &subprocess.Cmd{Argv: []string{"/bin/sh", "-c", "exit 3"}})
	fmt.Println(res.Err())
	// Output:
	// exited with code 0
	// {"JOB":"DEPLOY"}
	// exited with code 3
}

// trigger runs a declared tool's program as a binding does: argv only, the
// environment in layers, the model's input on stdin, under a deadline.
func trigger(ctx context.Context, root string, runtimeEnv, manifestEnv []string) error {
	res, err := subprocess.Run(ctx, &subprocess.Cmd{
		Argv:         []string{"./.basis/tools/jenkins", "trigger"}, // never a shell
		Root:         root,                                          // the workspace: ./ paths and Dir resolve here
		Env:          subprocess.MergeEnv(os.Environ(), runtimeEnv, manifestEnv),
		Stdin:        []byte(`{"job":"deploy"}`),
		Timeout:      2 * time.Minute,
		OnStderrLine: func(line string) { log.Print(line) },
	})
	if err != nil {
		return err // the Cmd itself was unusable (empty argv, NUL in env, ...)
	}
	switch res.Outcome.Kind {
	case subprocess.Exited: // res.Outcome.Code
	case subprocess.Signaled: // res.Outcome.Signal
	case subprocess.TimedOut: // the deadline passed; the group was stopped
	case subprocess.Canceled: // ctx was cancelled; the group was stopped
	case subprocess.StartFailed: // res.Outcome.Err is a *StartError
	}
	fmt.Println(res.Outcome)
	fmt.Print(string(res.Stdout))
	return nil
}

// A workspace's script reads the job from stdin, reports progress on
// stderr (each line reaches OnStderrLine as it is written) and its result
// on stdout. The manifest's layer wins over the runtime's for a shared name.
func ExampleRun() {
	root, _ := os.MkdirTemp("", "subprocess-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis", "tools"), 0o755)
	_ = os.WriteFile(filepath.Join(root, ".basis", "tools", "jenkins"), []byte(`#!/bin/sh
echo "$1 $(cat) on $JENKINS_URL" >&2
echo "build 42"
`), 0o755)
	log.SetOutput(os.Stdout) // so this example's output shows the stderr lines
	log.SetFlags(0)
	defer log.SetOutput(os.Stderr)
	defer log.SetFlags(log.LstdFlags)

	err := trigger(context.Background(), root,
		[]string{"JENKINS_URL=https://ci.example"},
		[]string{"JENKINS_URL=https://jenkins.example"})
	fmt.Println(err)
	// Output:
	// trigger {"job":"deploy"} on https://jenkins.example
	// exited with code 0
	// build 42
	// <nil>
}

// ExampleReapOrphans is what a host that runs other people's programs
// calls once, early in main: from then on what a program leaves behind
// outside its process group dies when its run ends. (It has no output, so
// it is compiled, not run: it changes the whole process.)
func ExampleReapOrphans() {
	if err := subprocess.ReapOrphans(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		log.Fatal(err)
	}
}
