//go:build unix

package declared_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/declared"
)

// canary is a secret: it reaches programs through env values and ${VAR}
// placeholders, and must appear in nothing the package returns or prints.
const canary = "CANARY-5f1d-do-not-print"

// canaryOptions gives the canary to every layer ${VAR} reads from.
func canaryOptions() *declared.Options {
	return &declared.Options{
		Environ:    append(pathEnv(), "SECRET_TOKEN="+canary, "TOOLS_DIR=/nonexistent/"+canary, "WORK_DIR="+canary+"-missing-dir", "PROGRAM_DIR=/nonexistent/bin"),
		CommandEnv: []string{"CMD_SECRET=" + canary},
	}
}

// prints collects every way a value can be shown.
type prints struct{ texts []string }

func (p *prints) add(v any) {
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X"} {
		p.texts = append(p.texts, fmt.Sprintf(verb, v))
	}
	if raw, err := json.Marshal(v); err == nil {
		p.texts = append(p.texts, string(raw))
	}
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("shown", "value", v)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("shown", "value", v)
	p.texts = append(p.texts, text.String(), js.String())
}

func (p *prints) check(t *testing.T) {
	t.Helper()
	if len(p.texts) == 0 {
		t.Fatal("nothing was checked")
	}
	hexLower, hexUpper := fmt.Sprintf("%x", canary), fmt.Sprintf("%X", canary)
	for _, s := range p.texts {
		if strings.Contains(s, canary) || strings.Contains(s, hexLower) || strings.Contains(s, hexUpper) {
			t.Errorf("the secret is shown: %s", s)
		}
	}
}

func TestSecretsNeverShown(t *testing.T) {
	tools := map[string]any{
		"exits": map[string]any{
			"command": []string{"./.basis/tools/fail", "--token", "${SECRET_TOKEN}", "Authorization: ${CMD_SECRET}"},
			"env":     map[string]string{"API_TOKEN": "${SECRET_TOKEN}", "LITERAL": canary, "FROM_COMMAND": "${CMD_SECRET}"},
		},
		"signals":   map[string]any{"command": []string{"./.basis/tools/crash", "${SECRET_TOKEN}"}},
		"times_out": map[string]any{"command": []string{"./.basis/tools/slow", "${SECRET_TOKEN}"}, "timeout_ms": 200},
		// The program's path is in the subject, expanded: it is what
		// runs. So it is the one place a placeholder's value is shown,
		// and no credential belongs in it (README, ADR 0003).
		"no_program":  map[string]any{"command": []string{"${PROGRAM_DIR}/missing", "${SECRET_TOKEN}"}},
		"not_in_path": map[string]any{"command": []string{"no-such-program-anywhere", "${SECRET_TOKEN}"}},
		"unavailable": map[string]any{"command": []string{"./.basis/tools/ok", "${SECRET_TOKEN}", "${NOT_SET_ANYWHERE}"}, "env": map[string]string{"K": "${SECRET_TOKEN}"}},
		"no_cwd":      map[string]any{"command": []string{"/bin/cat"}, "cwd": "${WORK_DIR}"},
		"abs_cwd":     map[string]any{"command": []string{"/bin/cat"}, "cwd": "${TOOLS_DIR}"},
		"works":       map[string]any{"command": []string{"./.basis/tools/ok", "${SECRET_TOKEN}"}, "env": map[string]string{"T": "${UNSET:-" + canary + "}"}},
	}
	for _, v := range tools {
		tool := v.(map[string]any)
		tool["description"] = "d"
		tool["input_schema"] = objectSchema(map[string]string{"job": "string"})
	}
	root := workspace(t, manifestOf(t, tools))
	// The programs say nothing of their arguments or environment: what
	// they print is theirs to answer for.
	script(t, root, ".basis/tools/fail", `echo "failed" >&2; exit 3`)
	script(t, root, ".basis/tools/crash", `kill -SEGV $$`)
	script(t, root, ".basis/tools/slow", `sleep 30`)
	script(t, root, ".basis/tools/ok", `[ "$1" = "$API_TOKEN$T" ] || [ "$1" = "$T" ] && echo fine`)

	loaded := loadTools(t, root, canaryOptions())
	var p prints
	p.add(loaded)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tool := range loaded {
		spec := tool.Spec()
		p.add(tool)
		p.add(spec)
		p.add(*spec)
		p.add(tool.Descriptor())
		// fmt's reflection on values it cannot call methods on.
		p.add(struct {
			s declared.Spec
			t declared.Tool
		}{*spec, *tool})

		if len(spec.EnvNames) > 0 && !strings.Contains(spec.String(), spec.EnvNames[0]+"=[redacted]") {
			t.Errorf("%s: env not shown redacted: %s", spec.Name, spec)
		}

		p.add(tool.Unavailable())
		p.add(tool.CheckStart())
		p.add(tool.Warnings())
		preview, err := tool.AuthorizationPreview(t.Context(), callWith(`{"job": "deploy"}`))
		// A workspace tool's cwd must exist and be in the workspace:
		// ${TOOLS_DIR} leads out, ${WORK_DIR} does not exist.
		refused := spec.Name == "unavailable" || spec.Name == "not_in_path" || spec.Name == "abs_cwd" || spec.Name == "no_cwd"
		if refused != (err != nil) {
			t.Fatalf("%s: preview: %v", spec.Name, err)
		}
		p.add(err)
		p.add(preview)
		p.add(string(preview.Subject))

		_, err = tool.AuthorizationPreview(t.Context(), callWith(`{"job": 5}`))
		p.add(err)
		_, err = tool.Execute(t.Context(), callWith(`{}`))
		p.add(err)

		res, err := tool.Execute(t.Context(), callWith(`{"job": "deploy"}`))
		p.add(res)
		p.add(err)
		if spec.Name != "works" && err == nil {
			t.Errorf("%s: want a failure", spec.Name)
		}
		if spec.Name == "works" && (err != nil || res.Text != "fine") {
			t.Errorf("works: %q, %v: the program did not get the secret", res.Text, err)
		}
		_, err = tool.Execute(cancelled, callWith(`{"job": "deploy"}`))
		p.add(err)
	}
	p.check(t)
}

// Load problems never carry a value, whatever the problem and wherever
// the secret sits in the file.
func TestSecretsNeverInLoadProblems(t *testing.T) {
	manifest := `{
	  "schema": 1,
	  "tools": {
	    "a": {"description": "d", "input_schema": {}, "command": ["./x", "` + canary + `\u0000"], "env": {"K": "` + canary + `${"}},
	    "b": {"description": "d", "input_schema": {}, "command": ["./x"], "cwd": "` + canary + `${}", "side_effect": "` + canary + `"},
	    "c": {"description": "d", "input_schema": {"type": "object", "properties": {"p": {"pattern": "[` + canary + `", "type": "` + canary + `"}}}, "command": ["./x"]},
	    "d": {"description": "d", "input_schema": {"$ref": "https://example.com/` + canary + `"}, "command": ["${UNSET_` + "X" + `}", "${SECRET_TOKEN:?` + canary + `}"]},
	    "e": {"description": "d", "input_schema": {}, "command": ["./x"], "env": {"OK": "${SECRET_TOKEN}"}, "timeout_ms": "` + canary + `", "` + canary + `": 1},
	    "f": {"description": "d", "input_schema": {}, "command": ["./x"], "env": {"OK": "${SECRET_TOKEN}", "N": "${NOT_SET}"}}
	  }
	}`
	root := workspace(t, manifest)
	_, err := declared.Load(t.Context(), root, canaryOptions())
	problems := problemsOf(t, err)
	if len(problems) < 10 {
		t.Errorf("only %d problems found:\n%v", len(problems), err)
	}
	var p prints
	p.add(err)
	for _, e := range problems {
		p.add(e)
		p.add(*e)
	}
	p.check(t)

	// A syntax error next to a secret does not quote it either.
	root = workspace(t, `{"schema": 1, "tools": {"a": {"env": {"K": "`+canary+`" "L": 1}}}}`)
	_, err = declared.Load(t.Context(), root, canaryOptions())
	p = prints{}
	p.add(err)
	p.check(t)
	if len(problemsOf(t, err)) != 1 {
		t.Errorf("want one syntax problem: %v", err)
	}
}

// The redacted forms are stable and say what they hide.
func TestRedactedForms(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{"jenkins_job": map[string]any{
		"description":  "Trigger a Jenkins job.",
		"input_schema": map[string]any{"type": "object"},
		"command":      []string{"./.basis/tools/jenkins", "trigger", "${JENKINS_URL:-https://ci}"},
		"env":          map[string]string{"JENKINS_TOKEN": "${JENKINS_TOKEN}", "A": "literal"},
		"side_effect":  "external",
		"timeout_ms":   60000,
	}}))
	source := filepath.Join(root, declared.WorkspaceFile)
	tool := loadTool(t, root, &declared.Options{Environ: []string{"JENKINS_TOKEN=" + canary}}, "jenkins_job")
	spec := tool.Spec()
	tests := []struct{ got, want string }{
		{spec.String(), "jenkins_job: ./.basis/tools/jenkins trigger ${JENKINS_URL:-https://ci} (external, timeout 1m0s, env A=[redacted] JENKINS_TOKEN=[redacted]) from " + source},
		{fmt.Sprint(tool), "declared tool jenkins_job: ./.basis/tools/jenkins trigger ${JENKINS_URL:-https://ci} (external, timeout 1m0s, env A=[redacted] JENKINS_TOKEN=[redacted]) from " + source},
		{fmt.Sprintf("%#v", *spec), `declared.Spec{Name:"jenkins_job", Description:"Trigger a Jenkins job.", Command:[]string{"./.basis/tools/jenkins", "trigger", "${JENKINS_URL:-https://ci}"}, Cwd:"", Env:{A=[redacted], JENKINS_TOKEN=[redacted]}, SideEffect:external, Timeout:1m0s, Network:false, Root:"` + root + `", Source:"` + source + `"}`},
		{mustJSON(t, spec), `{"name":"jenkins_job","description":"Trigger a Jenkins job.","input_schema":{"type":"object"},"command":["./.basis/tools/jenkins","trigger","${JENKINS_URL:-https://ci}"],"env":{"A":"[redacted]","JENKINS_TOKEN":"[redacted]"},"side_effect":"external","timeout_ms":60000,"root":"` + root + `","source":"` + source + `"}`},
		{mustJSON(t, tool), mustJSON(t, spec)},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})).Info("loaded", "tool", tool)
	want := `level=INFO msg=loaded tool.name=jenkins_job tool.command="[./.basis/tools/jenkins trigger ${JENKINS_URL:-https://ci}]" tool.env.A=[redacted] tool.env.JENKINS_TOKEN=[redacted] tool.side_effect=external tool.timeout=1m0s tool.source=` + source + "\n"
	if buf.String() != want {
		t.Errorf("slog:\ngot  %s\nwant %s", buf.String(), want)
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
