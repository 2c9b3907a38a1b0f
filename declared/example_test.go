package declared_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

func Example() {
	root, _ := os.MkdirTemp("", "declared-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
	  "schema": 1,
	  "tools": {
	    "shout": {
	      "description": "Upper-case the text.",
	      "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	      "command": ["tr", "a-z", "A-Z"],
	      "env": {"SHOUT_TOKEN": "${SHOUT_TOKEN}"}
	    }
	  }
	}`), 0o644)

	tools, err := declared.Load(&declared.Config{
		Root:    root,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "SHOUT_TOKEN=s3cret"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool := tools[0]
	d := tool.Descriptor()
	fmt.Println(d.Name, d.Binding, d.SideEffect, d.Timeout)

	ctx := context.Background()
	call := contract.Call{ID: "call_1", Input: json.RawMessage(`{"text": "hello"}`)}
	preview, _ := tool.AuthorizationPreview(ctx, call)
	fmt.Printf("%s\n", preview.Subject)

	res, err := tool.Execute(ctx, call)
	fmt.Println(res.Text, err)

	_, err = tool.Execute(ctx, contract.Call{ID: "call_2", Input: json.RawMessage(`{"text": 5}`)})
	fmt.Println(err)

	fmt.Println(strings.ReplaceAll(fmt.Sprint(tool), root, "$ROOT"))
	// Output:
	// shout declared process 2m0s
	// {"command":["tr","a-z","A-Z"],"cwd":".","input":{"text":"hello"},"tool":"shout"}
	// {"TEXT": "HELLO"} <nil>
	// the input for shout does not match its schema: /text: expected string, but got number
	// declared tool shout: tr a-z A-Z (process, timeout 2m0s, env SHOUT_TOKEN=[redacted]) from $ROOT/.basis/tools.json
}

// Every problem in every manifest is reported, each an *Error of its own.
func ExampleLoad_problems() {
	root, _ := os.MkdirTemp("", "declared-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
  "schema": 1,
  "tools": {
    "deploy": {
      "description": "Deploy a service.",
      "input_schema": {"type": "object"},
      "command": ["./deploy", "--token", "${DEPLOY_TOKEN}"],
      "timout_ms": 60000
    }
  }
}`), 0o644)

	_, err := declared.Load(&declared.Config{Root: root, Environ: []string{}})
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var p *declared.Error
		if errors.As(e, &p) {
			fmt.Printf("line %d, tool %s, field %s, variable %q: %v\n", p.Line, p.Tool, p.Field, p.Variable, p.Err)
		}
	}
	fmt.Println(errors.Is(err, declared.ErrUnsetVariable), errors.Is(err, declared.ErrUnknownKey))
	// Output:
	// line 7, tool deploy, field command[2], variable "DEPLOY_TOKEN": variable DEPLOY_TOKEN is not set and has no default; set it, or write ${DEPLOY_TOKEN:-default}
	// line 8, tool deploy, field timout_ms, variable "": unknown key; did you mean timeout_ms? (a tool may have description, input_schema, command, cwd, env, side_effect, timeout_ms)
	// true true
}
