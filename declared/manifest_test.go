//go:build unix

package declared_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// goldenEnv is the environment the golden manifests are loaded with:
// JENKINS_TOKEN is deliberately unset, EMPTY is set and empty.
func goldenEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=/home/SECRET-VALUE", "EMPTY="}
}

// TestManifestProblemsGolden loads every manifest under
// testdata/manifests and pins the messages a person sees, one problem per
// line, in testdata/problems.golden (go test -update rewrites it). Every
// bad value in those files contains SECRET, and no message may.
func TestManifestProblemsGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "manifests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	sort.Strings(files)
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, file := range files {
		out.WriteString("== " + filepath.Base(file) + "\n")
		tools, err := declared.LoadFile(t.Context(), abs, file, &declared.Options{Environ: goldenEnv(), Reserved: []string{"spawn"}})
		if err == nil {
			out.WriteString("ok: " + strings.Join(names(tools), ", ") + "\n")
			for _, tool := range tools {
				var lines []string
				if err := tool.Unavailable(); err != nil {
					lines = append(lines, "unavailable: "+err.Error())
				}
				for _, w := range tool.Warnings() {
					lines = append(lines, "warning: "+w.String())
				}
				for _, line := range lines {
					line = strings.ReplaceAll(line, abs, "testdata")
					if strings.Contains(line, "SECRET") {
						t.Errorf("a message quotes a value: %s", line)
					}
					out.WriteString(line + "\n")
				}
			}
			continue
		}
		if tools != nil {
			t.Errorf("%s: tools returned alongside problems", file)
		}
		for _, p := range problemsOf(t, err) {
			line := strings.ReplaceAll(p.Error(), abs, "testdata")
			if strings.Contains(line, "SECRET") {
				t.Errorf("a message quotes a value: %s", line)
			}
			out.WriteString(line + "\n")
		}
	}
	golden := filepath.Join("testdata", "problems.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("problems differ from %s (-want +got):\n%s", golden, diff)
	}
}

// problemCase is one bad manifest and the one problem it must produce.
type problemCase struct {
	name     string
	manifest string
	is       error
	tool     string
	field    string
	variable string
	line     int
	column   int
	says     string // a phrase the message must contain
}

func TestManifestProblems(t *testing.T) {
	const good = `"description": "d", "input_schema": {"type": "object"}, "command": ["./x"]`
	tests := []problemCase{
		{"syntax error position", "{\n  \"schema\": 1,\n  \"tools\": {\"x\": {" + good + ",}}\n}", declared.ErrSyntax, "", "", "", 3, 94, "trailing comma"},
		{"empty file", "", declared.ErrSyntax, "", "", "", 1, 1, "empty"},
		{"top level array", `[]`, declared.ErrWrongType, "", "", "", 1, 1, "not an array"},
		{"schema missing", `{"tools": {}}`, declared.ErrMissingField, "", "schema", "", 1, 1, `"schema": 1`},
		{"schema future", `{"schema": 2, "tools": {"x": {"unknown": 1}}}`, declared.ErrSchemaVersion, "", "schema", "", 1, 12, "schema 1 only"},
		{"schema text", `{"schema": "1", "tools": {}}`, declared.ErrWrongType, "", "schema", "", 1, 12, "number 1"},
		{"tools missing", `{"schema": 1}`, declared.ErrMissingField, "", "tools", "", 1, 1, "missing"},
		{"tools array", `{"schema": 1, "tools": []}`, declared.ErrWrongType, "", "tools", "", 1, 24, "object of tools"},
		{"unknown top key", `{"schema": 1, "tools": {}, "tool": {}}`, declared.ErrUnknownKey, "", "tool", "", 1, 28, "did you mean tools"},
		{"unknown tool key", `{"schema": 1, "tools": {"x": {` + good + `, "timout_ms": 5}}}`, declared.ErrUnknownKey, "x", "timout_ms", "", 1, 107, "did you mean timeout_ms"},
		{"duplicate tool", `{"schema": 1, "tools": {"x": {` + good + `}, "x": {` + good + `}}}`, declared.ErrDuplicateKey, "x", "", "", 1, 108, "declared twice"},
		{"duplicate field", `{"schema": 1, "tools": {"x": {` + good + `, "command": ["./y"]}}}`, declared.ErrDuplicateKey, "x", "command", "", 1, 107, "twice"},
		{"blank description", `{"schema": 1, "tools": {"x": {"description": " \t", "input_schema": {}, "command": ["./x"]}}}`, declared.ErrMissingField, "x", "description", "", 1, 46, "empty"},
		{"invalid name", `{"schema": 1, "tools": {"a b": {` + good + `}}}`, contract.ErrInvalidName, "", "", "", 1, 25, "character 2"},
		{"mcp prefix", `{"schema": 1, "tools": {"mcp__x": {` + good + `}}}`, declared.ErrReservedName, "mcp__x", "", "", 1, 25, "MCP"},
		{"schema not object", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": true, "command": ["./x"]}}}`, declared.ErrWrongType, "x", "input_schema", "", 1, 67, "JSON object"},
		{"schema for an array", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {"type": "array"}, "command": ["./x"]}}}`, declared.ErrInvalidSchema, "x", "input_schema", "", 1, 67, `"object"`},
		{"schema does not compile", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {"properties": {"a": {"minLength": "3"}}}, "command": ["./x"]}}}`, declared.ErrInvalidSchema, "x", "input_schema/properties/a/minLength", "", 1, 67, "expected integer, but got string"},
		{"remote reference", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {"$ref": "http://example.com/s.json"}, "command": ["./x"]}}}`, declared.ErrInvalidSchema, "x", "input_schema", "", 1, 67, "self-contained"},
		{"command string", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {}, "command": "./x a"}}}`, declared.ErrWrongType, "x", "command", "", 1, 82, "never one shell string"},
		{"command empty", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {}, "command": []}}}`, declared.ErrInvalidCommand, "x", "command", "", 1, 82, "empty"},
		{"program blank", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {}, "command": [" "]}}}`, declared.ErrInvalidCommand, "x", "command[0]", "", 1, 83, "blank"},
		{"argument not a string", `{"schema": 1, "tools": {"x": {"description": "d", "input_schema": {}, "command": ["./x", 1]}}}`, declared.ErrWrongType, "x", "command[1]", "", 1, 90, "string"},
		{"timeout zero", `{"schema": 1, "tools": {"x": {` + good + `, "timeout_ms": 0}}}`, declared.ErrInvalidValue, "x", "timeout_ms", "", 1, 121, "at least 1"},
		{"read-only side effect", `{"schema": 1, "tools": {"x": {` + good + `, "side_effect": "none"}}}`, declared.ErrInvalidValue, "x", "side_effect", "", 1, 122, "process or external"},
		{"env name", `{"schema": 1, "tools": {"x": {` + good + `, "env": {"A-B": "v"}}}}`, declared.ErrInvalidValue, "x", "env", "", 1, 115, "not a variable name"},
		{"loader variable", `{"schema": 1, "tools": {"x": {` + good + `, "env": {"LD_PRELOAD": "/tmp/x.so"}}}}`, declared.ErrLoaderVariable, "x", "env.LD_PRELOAD", "", 1, 115, "dynamic loader"},
		{"loader variable, any case", `{"schema": 1, "tools": {"x": {` + good + `, "env": {"dyld_insert_libraries": "x"}}}}`, declared.ErrLoaderVariable, "x", "env.dyld_insert_libraries", "", 1, 115, "DYLD_*"},
		{"network without external", `{"schema": 1, "tools": {"x": {` + good + `, "network": true}}}`, declared.ErrInvalidValue, "x", "network", "", 1, 118, `"side_effect": "external"`},
		{"network not a boolean", `{"schema": 1, "tools": {"x": {` + good + `, "network": "yes", "side_effect": "external"}}}`, declared.ErrWrongType, "x", "network", "", 1, 118, "true or false"},
		{"unknown key that may be a token", `{"schema": 1, "tools": {"x": {` + good + `, "ghp_0123456789abcdefghij0123456789abcdef": 1}}}`, declared.ErrUnknownKey, "x", "", "", 1, 107, "not shown"},
		{"unknown word key", `{"schema": 1, "tools": {"x": {` + good + `, "enabled": true}}}`, declared.ErrUnknownKey, "x", "enabled", "", 1, 107, "unknown key (a tool may have"},
		{"reserved name in another case", `{"schema": 1, "tools": {"Spawn": {` + good + `}}}`, declared.ErrReservedName, "Spawn", "", "", 1, 25, "taken"},
		{"empty placeholder", `{"schema": 1, "tools": {"x": {` + good + `, "cwd": "${}"}}}`, configfile.ErrPlaceholder, "x", "cwd", "", 1, 114, "names no variable"},
		{"unclosed placeholder", `{"schema": 1, "tools": {"x": {` + good + `, "cwd": "a${HOME"}}}`, configfile.ErrPlaceholder, "x", "cwd", "HOME", 1, 114, "at character 2 is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, tt.manifest)
			_, err := declared.Load(t.Context(), root, &declared.Options{Environ: []string{"HOME=/home/x"}})
			problems := problemsOf(t, err)
			if len(problems) != 1 {
				t.Fatalf("want one problem, got %d:\n%v", len(problems), err)
			}
			p := problems[0]
			if !errors.Is(p, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", p, tt.is)
			}
			type where struct {
				File, Tool, Field, Variable string
				Line, Column                int
			}
			want := where{filepath.Join(root, declared.WorkspaceFile), tt.tool, tt.field, tt.variable, tt.line, tt.column}
			got := where{p.File, toolOf(p), p.Field, variableOf(p), p.Line, p.Column}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problem located wrongly (-want +got):\n%s\n%v", diff, p)
			}
			if !strings.Contains(p.Error(), tt.says) {
				t.Errorf("message %q does not say %q", p.Error(), tt.says)
			}
		})
	}
}

// Every missing required field is named, all at once.
func TestEveryMissingFieldNamed(t *testing.T) {
	root := workspace(t, `{"schema": 1, "tools": {"x": {"description": ""}}}`)
	_, err := declared.Load(t.Context(), root, nil)
	var fields []string
	for _, p := range problemsOf(t, err) {
		if !errors.Is(p, declared.ErrMissingField) {
			t.Errorf("%v is not ErrMissingField", p)
		}
		fields = append(fields, p.Field)
	}
	if diff := cmp.Diff([]string{"input_schema", "command", "description"}, fields); diff != "" {
		t.Errorf("missing fields (-want +got):\n%s", diff)
	}
}

func TestDescriptorAsDeclared(t *testing.T) {
	manifest := `{
	  "schema": 1,
	  "tools": {
	    "jenkins_job": {
	      "description": "Trigger a Jenkins job and return its build number.",
	      "input_schema": {
	        "type": "object",
	        "properties": { "job": { "type": "string" } },
	        "required": ["job"]
	      },
	      "command": ["./.basis/tools/jenkins", "trigger"],
	      "env": { "JENKINS_TOKEN": "${JENKINS_TOKEN}" },
	      "side_effect": "external",
	      "timeout_ms": 60000
	    },
	    "plain": {"description": "Plain.", "input_schema": {}, "command": ["true"]},
	    "untyped": {"description": "Untyped.", "input_schema": {"properties": {"a": {}}}, "command": ["true"]}
	  }
	}`
	root := workspace(t, manifest)
	source := filepath.Join(root, declared.WorkspaceFile)
	tools := loadTools(t, root, &declared.Options{Environ: []string{"JENKINS_TOKEN=t0k3n"}})
	var got []contract.Descriptor
	for _, tool := range tools {
		got = append(got, tool.Descriptor())
	}
	want := []contract.Descriptor{
		{
			Name:         "jenkins_job",
			Description:  "Trigger a Jenkins job and return its build number.",
			InputSchema:  []byte(`{"type":"object","properties":{"job":{"type":"string"}},"required":["job"]}`),
			Capabilities: []contract.Capability{contract.CapabilityProcessExec},
			SideEffect:   contract.SideEffectExternal,
			Parallel:     false,
			Timeout:      60 * time.Second,
			Binding:      contract.BindingDeclared,
			Source:       source,
		},
		{
			Name: "plain",
			// A schema that leaves "type" out states it in the
			// descriptor, as model providers expect.
			Description:  "Plain.",
			InputSchema:  []byte(`{"type":"object"}`),
			Capabilities: []contract.Capability{contract.CapabilityProcessExec},
			SideEffect:   contract.SideEffectProcess,
			Timeout:      declared.DefaultTimeout,
			Binding:      contract.BindingDeclared,
			Source:       source,
		},
		{
			Name:         "untyped",
			Description:  "Untyped.",
			InputSchema:  []byte(`{"type":"object","properties":{"a":{}}}`),
			Capabilities: []contract.Capability{contract.CapabilityProcessExec},
			SideEffect:   contract.SideEffectProcess,
			Timeout:      declared.DefaultTimeout,
			Binding:      contract.BindingDeclared,
			Source:       source,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptors (-want +got):\n%s", diff)
	}
	if declared.DefaultTimeout != 120*time.Second {
		t.Errorf("DefaultTimeout = %v", declared.DefaultTimeout)
	}

	// The descriptor is a copy: changing it changes nothing in the tool.
	d := tools[0].Descriptor()
	d.Capabilities[0] = "changed"
	d.InputSchema[0] = '['
	if diff := cmp.Diff(want[0], tools[0].Descriptor()); diff != "" {
		t.Errorf("descriptor changed through a returned copy:\n%s", diff)
	}

	spec := tools[0].Spec()
	wantSpec := struct {
		Command  []string
		Cwd      string
		EnvNames []string
		Root     string
	}{[]string{"./.basis/tools/jenkins", "trigger"}, "", []string{"JENKINS_TOKEN"}, root}
	gotSpec := struct {
		Command  []string
		Cwd      string
		EnvNames []string
		Root     string
	}{spec.Command, spec.Cwd, spec.EnvNames, spec.Root}
	if diff := cmp.Diff(wantSpec, gotSpec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

// $schema picks the draft: draft-07 asserts "format" where 2020-12 only
// annotates, so the same input passes one and is refused by the other.
func TestSchemaDraftFollowsDollarSchema(t *testing.T) {
	tests := []struct {
		name, dollarSchema string
		refused            bool
	}{
		{"default 2020-12", "", false},
		{"explicit 2020-12", "https://json-schema.org/draft/2020-12/schema", false},
		{"draft-07", "http://json-schema.org/draft-07/schema#", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := map[string]any{"type": "object", "properties": map[string]any{"when": map[string]any{"type": "string", "format": "date-time"}}}
			if tt.dollarSchema != "" {
				schema["$schema"] = tt.dollarSchema
			}
			root := workspace(t, manifestOf(t, map[string]any{"x": map[string]any{"description": "d", "input_schema": schema, "command": []string{"/bin/cat"}}}))
			tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "x")
			_, err := tool.AuthorizationPreview(t.Context(), callWith(`{"when": "not a date"}`))
			if refused := errors.Is(err, contract.ErrInvalidInput); refused != tt.refused {
				t.Fatalf("refused = %v (%v), want %v", refused, err, tt.refused)
			}
			if tt.refused && err.Error() != "the input for x does not match its schema: /when: is not a valid date-time (format)" {
				t.Errorf("message = %q", err.Error())
			}
		})
	}
}
