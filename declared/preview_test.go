//go:build unix

package declared_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/inputschema"
	"github.com/google/go-cmp/cmp"
)

func TestPreview(t *testing.T) {
	tests := []struct {
		name    string
		tool    map[string]any
		subject string
		dir     string // "$ROOT" is replaced by the workspace root
		summary string
		effect  contract.SideEffect
		dirs    []string // made in the workspace first
		global  bool     // declared in the operator's tools.json, which may name any cwd
	}{
		{
			name:    "no cwd: the root, shown as .",
			tool:    map[string]any{"command": []string{"./.basis/tools/jenkins", "trigger"}, "side_effect": "external"},
			subject: `{"command":["./.basis/tools/jenkins","trigger"],"cwd":".","env":[],"input":{"job":"deploy"},"program":"$ROOT/.basis/tools/jenkins","tool":"t"}`,
			dir:     "$ROOT", summary: "run ./.basis/tools/jenkins trigger in $ROOT", effect: contract.SideEffectExternal,
		},
		{
			name:    "relative cwd resolves against the root",
			tool:    map[string]any{"command": []string{"make", "deploy"}, "cwd": "services/../web"},
			subject: `{"command":["make","deploy"],"cwd":"services/../web","env":[],"input":{"job":"deploy"},"program":"$BIN/make","tool":"t"}`,
			dir:     "$ROOT/web", summary: "run make deploy in $ROOT/web", effect: contract.SideEffectProcess,
			dirs: []string{"services", "web"},
		},
		{
			name:    "absolute cwd",
			tool:    map[string]any{"command": []string{"/bin/cat"}, "cwd": "/tmp"},
			subject: `{"command":["/bin/cat"],"cwd":"/tmp","env":[],"input":{"job":"deploy"},"program":"/bin/cat","tool":"t"}`,
			dir:     "/tmp", summary: "run /bin/cat in /tmp", effect: contract.SideEffectProcess,
			global: true,
		},
		{
			name: "placeholders stay as written in the command and cwd",
			tool: map[string]any{
				"command": []string{"curl", "-H", "Authorization: Bearer ${TOKEN}", "${API_URL:-https://api}/jobs"},
				"cwd":     "builds/${BUILD_DIR}",
				"env":     map[string]string{"API_TOKEN": "${TOKEN}"},
			},
			subject: `{"command":["curl","-H","Authorization: Bearer ${TOKEN}","${API_URL:-https://api}/jobs"],"cwd":"builds/${BUILD_DIR}","env":["API_TOKEN"],"input":{"job":"deploy"},"program":"$BIN/curl","tool":"t"}`,
			dir:     "$ROOT/builds/${BUILD_DIR}",
			summary: `run curl -H "Authorization: Bearer ${TOKEN}" ${API_URL:-https://api}/jobs in $ROOT/builds/${BUILD_DIR}`,
			effect:  contract.SideEffectProcess,
			dirs:    []string{"builds/VALUE-dir"},
		},
		{
			name:    "a cwd that expands to an absolute path is not put under the root",
			tool:    map[string]any{"command": []string{"/bin/cat"}, "cwd": "${ABS_DIR}/x"},
			subject: `{"command":["/bin/cat"],"cwd":"${ABS_DIR}/x","env":[],"input":{"job":"deploy"},"program":"/bin/cat","tool":"t"}`,
			dir:     "${ABS_DIR}/x", summary: "run /bin/cat in ${ABS_DIR}/x", effect: contract.SideEffectProcess,
			global: true,
		},
		{
			name:    "a multi-line argument keeps the summary on one line",
			tool:    map[string]any{"command": []string{"printf", "a\nb", "&&", "<x>"}},
			subject: `{"command":["printf","a\nb","&&","<x>"],"cwd":".","env":[],"input":{"job":"deploy"},"program":"$BIN/printf","tool":"t"}`,
			dir:     "$ROOT", summary: `run printf "a\nb" "&&" "<x>" in $ROOT`, effect: contract.SideEffectProcess,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := map[string]any{"description": "d", "input_schema": objectSchema(map[string]string{"job": "string"})}
			for k, v := range tt.tool {
				tool[k] = v
			}
			cfg := &declared.Options{}
			var root string
			if tt.global {
				root = t.TempDir()
				cfg.ConfigDir = t.TempDir()
				writeFile(t, cfg.ConfigDir, declared.GlobalFile, manifestOf(t, map[string]any{"t": tool}), 0o644)
			} else {
				root = workspace(t, manifestOf(t, map[string]any{"t": tool}))
			}
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// Programs found in PATH are the test's own, so the subject
			// does not depend on what this machine has installed.
			bin := t.TempDir()
			for _, name := range []string{"make", "curl", "printf"} {
				script(t, bin, name, "true")
			}
			cfg.Environ = []string{"PATH=" + bin, "TOKEN=VALUE-token", "BUILD_DIR=VALUE-dir", "ABS_DIR=/opt/VALUE-abs"}
			tl := loadTool(t, root, cfg, "t")

			got, err := tl.AuthorizationPreview(t.Context(), callWith(`{ "job" : "deploy" }`))
			if err != nil {
				t.Fatal(err)
			}
			expandRoot := func(s string) string { return strings.NewReplacer("$ROOT", root, "$BIN", bin).Replace(s) }
			want := contract.Preview{
				SideEffect:   tt.effect,
				Capabilities: []contract.Capability{contract.CapabilityProcessExec},
				Dir:          expandRoot(tt.dir),
				Subject:      []byte(expandRoot(tt.subject)),
				Summary:      expandRoot(tt.summary),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("preview (-want +got):\n%s", diff)
			}
			if strings.Contains(string(got.Subject)+got.Dir+got.Summary, "VALUE") {
				t.Errorf("preview shows an expanded value: %+v", got)
			}
		})
	}
}

// The Subject is canonical: the same call written differently is the same
// subject, byte for byte, so a remembered rule matches it.
func TestPreviewSubjectCanonical(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{"t": map[string]any{
		"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"/bin/cat"},
	}}))
	tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "t")
	a, err := tool.AuthorizationPreview(t.Context(), callWith(`{"b": [1, 2.50], "a": {"y": "&&", "x": null}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tool.AuthorizationPreview(t.Context(), callWith("{\n  \"a\": {\"x\": null, \"y\": \"&&\"},\n  \"b\": [1,2.50]\n}"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"command":["/bin/cat"],"cwd":".","env":[],"input":{"a":{"x":null,"y":"&&"},"b":[1,2.50]},"program":"/bin/cat","tool":"t"}`
	if diff := cmp.Diff(want, string(a.Subject)); diff != "" {
		t.Errorf("subject (-want +got):\n%s", diff)
	}
	if string(a.Subject) != string(b.Subject) {
		t.Errorf("the same call gave two subjects:\n%s\n%s", a.Subject, b.Subject)
	}
}

// Input that does not match the schema is refused in the preview and
// again in Execute, naming the field and the rule, never the value, and
// the program never starts.
func TestInputRefused(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"job":    map[string]any{"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
			"count":  map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
			"mode":   map[string]any{"enum": []string{"fast", "safe"}},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 2},
			"nested": map[string]any{"type": "object", "properties": map[string]any{"a/b~c": map[string]any{"type": "boolean"}}},
		},
		"required":             []string{"job"},
		"additionalProperties": false,
	}
	tests := []struct {
		name, input string
		want        []declared.InputProblem
	}{
		{"missing required field", `{"count": 3}`, []declared.InputProblem{{Field: "/job", Rule: "required, but missing"}}},
		{"absent input is the empty object", ``, []declared.InputProblem{{Field: "/job", Rule: "required, but missing"}}},
		{"wrong type", `{"job": 7}`, []declared.InputProblem{{Field: "/job", Rule: "expected string, but got number"}}},
		{"several problems, in field order", `{"job": "VALUE-x", "count": 99, "mode": "VALUE-mode", "extra": "VALUE-extra"}`, []declared.InputProblem{
			{Field: "/count", Rule: "must be at most 10 (maximum)"},
			{Field: "/extra", Rule: "not allowed: the schema names no such property (additionalProperties)"},
			{Field: "/job", Rule: "does not match the schema's pattern (pattern)"},
			{Field: "/mode", Rule: "is not one of the values the schema allows (enum)"},
		}},
		{"too short", `{"job": "a"}`, []declared.InputProblem{{Field: "/job", Rule: "must be at least 2 characters long (minLength)"}}},
		{"array items", `{"job": "ok", "tags": ["a", 5, "c"]}`, []declared.InputProblem{
			{Field: "/tags", Rule: "must have at most 2 items (maxItems)"},
			{Field: "/tags/1", Rule: "expected string, but got number"},
		}},
		{"pointer escaping", `{"job": "ok", "nested": {"a/b~c": "VALUE-yes"}}`, []declared.InputProblem{{Field: "/nested/a~1b~0c", Rule: "expected boolean, but got string"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, manifestOf(t, map[string]any{"t": map[string]any{
				"description": "d", "input_schema": schema, "command": []string{"./.basis/tools/mark"},
			}}))
			marker := filepath.Join(root, "started")
			script(t, root, ".basis/tools/mark", "touch "+marker)
			tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "t")

			_, previewErr := tool.AuthorizationPreview(t.Context(), callWith(tt.input))
			_, execErr := tool.Execute(t.Context(), callWith(tt.input))
			for _, err := range []error{previewErr, execErr} {
				var ie *declared.InputError
				if !errors.As(err, &ie) || !errors.Is(err, contract.ErrInvalidInput) {
					t.Fatalf("error = %v, want an *InputError wrapping ErrInvalidInput", err)
				}
				if diff := cmp.Diff(tt.want, ie.Problems); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
				if strings.Contains(err.Error(), "VALUE") || strings.Contains(err.Error(), "\n") {
					t.Errorf("message quotes the input or spans lines: %q", err.Error())
				}
			}
			if fileExists(marker) {
				t.Error("the program was started for input that does not match the schema")
			}
		})
	}
	// The whole message, as the model reads it.
	root := workspace(t, manifestOf(t, map[string]any{"jenkins_job": map[string]any{
		"description": "d", "input_schema": objectSchema(map[string]string{"job": "string"}), "command": []string{"/bin/cat"},
	}}))
	tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "jenkins_job")
	_, err := tool.Execute(t.Context(), callWith(`{"job": 5}`))
	if want := "the input for jenkins_job does not match its schema: /job: expected string, but got number"; err == nil || err.Error() != want {
		t.Errorf("message = %v, want %q", err, want)
	}
}

// Input that two JSON readers could read differently is refused before
// the schema is consulted, in the preview and in Execute, and the program
// never starts: a duplicate key ("job" twice: Go's decoder takes the last,
// others the first), keys equal under case folding (Go's decoder matches
// "Job" to a field named job), nesting past contract.MaxInputDepth, and
// anything that is not exactly one JSON object.
func TestAmbiguousInputRefused(t *testing.T) {
	tests := []struct {
		name, input, says string
	}{
		{"duplicate key", `{"job":"deploy","job":"test"}`, "/job: the key is written twice"},
		{"keys equal under case folding", `{"job":"test","Job":"deploy"}`, "/Job: another key of this object differs from it only in letter case"},
		{"Kelvin sign folds to k", `{"job":"test","nested":{"k":1,"\u212a":2}}`, "differs from it only in letter case"},
		{"duplicate deep inside", `{"job":"test","nested":{"list":[{"a":1,"a":2}]}}`, "/nested/list/0/a: the key is written twice"},
		{"nesting too deep", `{"job":"test","nested":` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `}`, "more than 64 deep"},
		{"not an object", `["VALUE-job"]`, "must be a JSON object"},
		{"null", `null`, "must be a JSON object"},
		{"not JSON", `{"job": VALUE}`, "not valid JSON"},
		{"truncated JSON", `{"job": "VALUE`, "not valid JSON"},
		{"two objects", `{"job": "ok"} {"job": "VALUE"}`, "more after the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := workspace(t, manifestOf(t, map[string]any{"t": map[string]any{
				"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{"./.basis/tools/mark"},
			}}))
			marker := filepath.Join(root, "started")
			script(t, root, ".basis/tools/mark", "touch "+marker)
			tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "t")

			_, previewErr := tool.AuthorizationPreview(t.Context(), callWith(tt.input))
			_, execErr := tool.Execute(t.Context(), callWith(tt.input))
			for _, err := range []error{previewErr, execErr} {
				if !errors.Is(err, contract.ErrInvalidInput) {
					t.Fatalf("error = %v, want one wrapping ErrInvalidInput", err)
				}
				if !strings.HasPrefix(err.Error(), "the input for t is refused: ") || !strings.Contains(err.Error(), tt.says) {
					t.Errorf("message = %q, want it to name the tool and say %q", err.Error(), tt.says)
				}
				if strings.Contains(err.Error(), "VALUE") || strings.Contains(err.Error(), "deploy") || strings.Contains(err.Error(), "\n") {
					t.Errorf("message quotes the input or spans lines: %q", err.Error())
				}
			}
			if fileExists(marker) {
				t.Error("the program was started for ambiguous input")
			}
		})
	}
}

// TestExplodingSchemaIsRefusedNotRun: a manifest's schema whose anyOf
// branches recurse through the same $ref would take hours to check a
// failing input 40 deep; the preview and Execute refuse it within the
// check's budget, and stop when the caller's context is done.
func TestExplodingSchemaIsRefusedNotRun(t *testing.T) {
	branch := map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/n"}}}
	schema := map[string]any{
		"$defs":      map[string]any{"n": map[string]any{"anyOf": []any{branch, branch}}},
		"properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/n"}},
	}
	root := workspace(t, manifestOf(t, map[string]any{"deep": map[string]any{
		"description": "d", "input_schema": schema, "command": []string{"./.basis/tools/mark"},
	}}))
	marker := filepath.Join(root, "started")
	script(t, root, ".basis/tools/mark", "touch "+marker)
	tool := loadTool(t, root, &declared.Options{Environ: pathEnv()}, "deep")
	input := strings.Repeat(`{"x":`, 40) + "1" + strings.Repeat("}", 40)

	_, previewErr := tool.AuthorizationPreview(t.Context(), callWith(input))
	_, execErr := tool.Execute(t.Context(), callWith(input))
	for _, err := range []error{previewErr, execErr} {
		var be *inputschema.BudgetError
		if !errors.As(err, &be) || !errors.Is(err, contract.ErrInvalidInput) || be.Tool != "deep" {
			t.Errorf("error = %v, want a *BudgetError for deep wrapping ErrInvalidInput", err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, previewErr = tool.AuthorizationPreview(ctx, callWith(input))
	_, execErr = tool.Execute(ctx, callWith(input))
	for _, err := range []error{previewErr, execErr} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("with a cancelled context: %v, want one wrapping context.Canceled", err)
		}
	}
	if fileExists(marker) {
		t.Error("the program was started")
	}
}
