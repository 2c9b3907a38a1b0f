// Command spawnonly is a host that gives its model only basis's spawn
// tool: it imports contract, spawn, approver and the runtime. `make
// release-check` builds it outside the workspace and checks that the
// declared binding is nowhere in its module graph or its binary.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "spawn-only host:", err)
		os.Exit(1)
	}
}

func run() error {
	tool, err := spawn.New(os.TempDir(), nil)
	if err != nil {
		return err
	}
	b := runtime.NewBuilder()
	if err := b.Add(tool); err != nil {
		return err
	}
	allow := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		return approver.Answer{Decision: approver.Allow}, nil
	})
	gate, err := approver.NewGate(allow, nil)
	if err != nil {
		return err
	}
	rt, err := b.Build(&runtime.Options{Gate: gate})
	if err != nil {
		return err
	}
	out := rt.Call(context.Background(), contract.SpawnName, contract.Call{ID: "1", Input: []byte(`{"input": "!echo hello from spawn"}`)})
	if out.Status != runtime.StatusOK {
		return fmt.Errorf("spawn: %s: %s", out.Status, out.Text)
	}
	fmt.Printf("spawn-only host: %s\n", out.Text)
	return nil
}
