// Command minimal is a host that embeds basis the way a stranger's program
// would: it imports contract, declared, approver and the runtime — nothing
// else — declares one tool in a workspace of its own and calls it.
// `make release-check` builds it outside the workspace, from modules
// served the way a module proxy serves them, and checks that no MCP SDK,
// shell parser or terminal package is in its module graph.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

const manifest = `{
  "schema": 1,
  "tools": {
    "word_count": {
      "description": "Count the words of the input object's text.",
      "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
      "command": ["wc", "-w"]
    }
  }
}`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "minimal host:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := os.MkdirTemp("", "minimal-host-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if err := os.MkdirAll(filepath.Join(root, ".basis"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(manifest), 0o644); err != nil {
		return err
	}
	tools, err := declared.Load(context.Background(), root, nil)
	if err != nil {
		return err
	}
	b := runtime.NewBuilder()
	for _, t := range tools {
		if err := b.Add(t); err != nil {
			return err
		}
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
	// wc reads the whole input object: {"text":"one two three"} is three
	// words to it.
	out := rt.Call(context.Background(), "word_count", contract.Call{ID: "1", Input: []byte(`{"text": "one two three"}`)})
	if out.Status != runtime.StatusOK {
		return fmt.Errorf("word_count: %s: %s", out.Status, out.Text)
	}
	fmt.Printf("minimal host: word_count said %s words\n", out.Text)
	return nil
}
