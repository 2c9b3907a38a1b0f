//go:build unix

package declared_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// pathEnv is the inherited environment most tests give: only PATH, so
// nothing of the test process's own environment leaks into expectations.
func pathEnv() []string { return []string{"PATH=" + os.Getenv("PATH")} }

// writeFile writes content to root/rel, creating directories.
func writeFile(t testing.TB, root, rel, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// workspace makes a workspace root whose .basis/tools.json is manifest.
func workspace(t testing.TB, manifest string) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, declared.WorkspaceFile, manifest, 0o644)
	return root
}

// script writes an executable /bin/sh script at root/rel.
func script(t testing.TB, root, rel, body string) string {
	t.Helper()
	return writeFile(t, root, rel, "#!/bin/sh\n"+body+"\n", 0o755)
}

// manifestOf builds a manifest with the given tools, each a JSON object
// written as a Go map so tests stay readable.
func manifestOf(t testing.TB, tools map[string]any) string {
	t.Helper()
	raw, err := json.MarshalIndent(map[string]any{"schema": 1, "tools": tools}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// objectSchema is an input_schema with the given properties, all required.
func objectSchema(props map[string]string) map[string]any {
	properties := map[string]any{}
	var required []string
	for name, typ := range props {
		properties[name] = map[string]any{"type": typ}
		required = append(required, name)
	}
	return map[string]any{"type": "object", "properties": properties, "required": required}
}

// loadTools loads the workspace at root with opts and fails the test on
// any problem.
func loadTools(t testing.TB, root string, opts *declared.Options) []*declared.Tool {
	t.Helper()
	tools, err := declared.Load(context.Background(), root, opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return tools
}

// loadTool loads the workspace at root with opts and returns the tool
// called name.
func loadTool(t testing.TB, root string, opts *declared.Options, name string) *declared.Tool {
	t.Helper()
	for _, tool := range loadTools(t, root, opts) {
		if tool.Descriptor().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func callWith(input string) contract.Call {
	return contract.Call{ID: "call_1", Input: json.RawMessage(input)}
}

// problemsOf unwraps the joined *Error values of a load error.
func problemsOf(t testing.TB, err error) []*configfile.Error {
	t.Helper()
	if err == nil {
		t.Fatal("want load problems, got none")
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("load error %T is not a join of problems", err)
	}
	var out []*configfile.Error
	for _, e := range joined.Unwrap() {
		var de *configfile.Error
		if !errors.As(e, &de) {
			t.Fatalf("problem %T (%v) is not a *configfile.Error", e, e)
		}
		if strings.Contains(de.Error(), "\n") {
			t.Errorf("problem is not one line: %q", de.Error())
		}
		out = append(out, de)
	}
	return out
}

func names(tools []*declared.Tool) []string {
	var out []string
	for _, tool := range tools {
		out = append(out, tool.Descriptor().Name)
	}
	return out
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// toolOf is the tool a problem is about, from its Subject ("tool NAME").
func toolOf(e *configfile.Error) string { return strings.TrimPrefix(e.Subject, "tool ") }

// variableOf is the variable a placeholder problem names, reached as a
// host reaches it: errors.As to configfile's *ExpandError.
func variableOf(err error) string {
	var xe *configfile.ExpandError
	if errors.As(err, &xe) {
		return xe.Variable
	}
	return ""
}
