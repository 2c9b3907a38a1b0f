//go:build unix

package declared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// marker frames every value a fuzz target plants; no message may show it.
// It cannot be part of a variable name, which messages may show.
const marker = "#~qzx~#"

func fuzzLoader(t testing.TB) *loader {
	l, err := newLoader("/ws", &Options{
		Environ:  []string{"PATH=/usr/bin:/bin", "SET=env-" + marker, "EMPTY="},
		Reserved: []string{"spawn"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// checkProblems asserts what every load error promises: a join of
// *configfile.Error values, each one clean line, located in the file, quoting no
// value.
func checkProblems(t *testing.T, data []byte, problems []error) {
	t.Helper()
	for _, e := range problems {
		var de *configfile.Error
		if !errors.As(e, &de) {
			t.Fatalf("problem %T is not a *configfile.Error", e)
		}
		msg := de.Error()
		if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
			t.Fatalf("problem is not one clean line: %q", msg)
		}
		if strings.Contains(msg, marker) {
			t.Fatalf("problem quotes a value: %s", msg)
		}
		if de.File != "tools.json" || de.Line < 1 || de.Column < 1 {
			t.Fatalf("problem not located in the file: %#v", de)
		}
		if tool, ok := strings.CutPrefix(de.Subject, "tool "); de.Subject != "" && (!ok || !contract.ValidName(tool)) {
			t.Fatalf("subject %q of a problem is not \"tool\" and a valid name", de.Subject)
		}
		if xe := (*configfile.ExpandError)(nil); errors.As(de, &xe) && xe.Variable != "" && !validVarName(xe.Variable) {
			t.Fatalf("variable %q in a problem is not a variable name", xe.Variable)
		}
		if de.Err == nil {
			t.Fatalf("problem without a cause: %s", msg)
		}
	}
}

// FuzzParseManifest feeds arbitrary bytes to the manifest parser: it must
// not panic, every problem must keep the promises above, and a manifest
// it accepts must hold only usable tools.
func FuzzParseManifest(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "manifests", "*.json"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, seed := range []string{
		``, `{}`, `[]`, `null`, `{"schema":1,"tools":{}}`, `{"schema":1,"tools":{"a":{}}}`,
		`{"schema":1,"tools":{"a":{"description":"d","input_schema":{},"command":["x","${SET}"],"env":{"A":"${SET:-d}"},"cwd":"c","side_effect":"external","timeout_ms":5}}}`,
		`{"schema":1,"tools":{"a":{"description":"d","input_schema":{"$defs":{"s":{"type":"string"}},"properties":{"p":{"$ref":"#/$defs/s"}}},"command":["x"]}}}`,
		`{"schema":1,"tools":{"a":{"description":"d","input_schema":{},"command":["x","${API_TOKEN}","${UNSET}"],"env":{"B":"${UNSET_TOO}"},"network":true,"side_effect":"external"}}}`,
		`{"schema":1,"tools":{"a":{"description":"d","input_schema":{},"command":["x"],"env":{"LD_PRELOAD":"x","DYLD_X":"y"},"network":1}}}`,
		"{\"schema\":1,\n\"tools\":{\"\u00e9\":1}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newParser(fuzzLoader(t), "tools.json", data)
		tools, problems := p.parse()
		if len(problems) > 0 {
			if tools != nil {
				t.Fatal("tools returned alongside problems")
			}
			checkProblems(t, data, problems)
			return
		}
		for _, tool := range tools {
			spec := tool.spec
			run := spec.run()
			if !contract.ValidName(spec.Name) || contract.IsMCPName(spec.Name) || contract.IsSpawnName(spec.Name) {
				t.Fatalf("accepted the name %q", spec.Name)
			}
			if u := tool.state.unavailable; u != nil {
				// Unavailable: listed, located, naming only variables.
				var problems []error
				for _, p := range u.Problems {
					var xe *configfile.ExpandError
					if !errors.Is(p, configfile.ErrUnsetVariable) || !errors.As(p, &xe) || xe.Variable == "" {
						t.Fatalf("an unavailable tool's problem is not an unset variable: %v", p)
					}
					problems = append(problems, p)
				}
				checkProblems(t, data, problems)
				if len(problems) == 0 || strings.Contains(u.Error(), marker) || strings.Contains(u.Error(), "\n") {
					t.Fatalf("unavailable tool without a clean reason: %q", u.Error())
				}
				continue
			}
			for _, w := range tool.state.warnings {
				if strings.Contains(w.String(), marker) || !credentialName(w.Variable) {
					t.Fatalf("bad warning: %s", w)
				}
			}
			if len(run.argv) == 0 || strings.TrimSpace(run.argv[0]) == "" || len(run.argv) != len(spec.Command) {
				t.Fatalf("accepted a command with no program: %q", spec.Command)
			}
			if spec.Timeout <= 0 || spec.SideEffect != contract.SideEffectProcess && spec.SideEffect != contract.SideEffectExternal {
				t.Fatalf("accepted timeout %v, side effect %v", spec.Timeout, spec.SideEffect)
			}
			if spec.Network && spec.SideEffect != contract.SideEffectExternal {
				t.Fatal("accepted network without side_effect external")
			}
			for _, name := range spec.EnvNames {
				if loaderVariable(name) {
					t.Fatalf("accepted the loader variable %s in env", name)
				}
			}
			if strings.TrimSpace(spec.Description) == "" || tool.schema == nil || !json.Valid(spec.InputSchema) {
				t.Fatal("accepted a tool without a description or schema")
			}
			if strings.Contains(spec.String(), "\n") {
				t.Fatalf("spec line spans lines: %q", spec.String())
			}
		}
	})
}

// valueSlots are the places a manifest holds a value. Each is a tool body
// with %s where the (JSON-encoded) value goes.
var valueSlots = []string{
	`{"description":"d","input_schema":{},"command":["./x"],"env":{"V":%s}}`,
	`{"description":"d","input_schema":{},"command":["./x",%s]}`,
	`{"description":"d","input_schema":{},"command":[%s]}`,
	`{"description":"d","input_schema":{},"command":["./x"],"cwd":%s}`,
	`{"description":"d","input_schema":{},"command":["./x"],"side_effect":%s}`,
	`{"description":"d","input_schema":{},"command":["./x"],"timeout_ms":%s}`,
	`{"description":"d","input_schema":{},"command":["./x"],"network":%s}`,
	`{"description":"d","input_schema":{"properties":{"p":{"enum":[%s],"pattern":%[1]s}}},"command":["./x"]}`,
	`{"description":"d","input_schema":{"properties":{"p":{"type":%s}}},"command":["./x"]}`,
	`{"description":"d","input_schema":{"$ref":%s},"command":["./x"]}`,
	`{"description":"d","input_schema":{},"command":["./x"],"env":{"V":"${UNSET:-" + %s + "}"}}`,
}

// FuzzManifestValue plants a value in every place a manifest holds one
// and checks that no problem ever quotes it, and that an env value is
// shown by no print of an accepted tool.
func FuzzManifestValue(f *testing.F) {
	for _, seed := range []string{"", "secret", "${SET}", "${", "${}", "${UNSET}", "a\x00b", "process", "60000", "\n", "${SET:-${"} {
		for slot := range valueSlots {
			f.Add(seed, uint8(slot))
		}
	}
	f.Fuzz(func(t *testing.T, value string, slot uint8) {
		if !utf8.ValidString(value) {
			return // JSON would carry it as U+FFFD; the marker still frames it
		}
		body := valueSlots[int(slot)%len(valueSlots)]
		encoded, _ := json.Marshal(marker + value + marker)
		var data string
		if strings.Contains(body, `"${UNSET:-" + %s + "}"`) {
			inner := string(encoded[1 : len(encoded)-1])
			data = `{"schema":1,"tools":{"t":` + strings.Replace(body, `"${UNSET:-" + %s + "}"`, `"${UNSET:-`+inner+`}"`, 1) + `}}`
		} else {
			data = `{"schema":1,"tools":{"t":` + fmt.Sprintf(body, encoded) + `}}`
		}
		p := newParser(fuzzLoader(t), "tools.json", []byte(data))
		tools, problems := p.parse()
		checkProblems(t, []byte(data), problems)
		if len(tools) == 1 && len(tools[0].spec.EnvNames) > 0 {
			tool := tools[0]
			for _, shown := range []string{fmt.Sprintf("%v %+v %#v %s", tool, tool, tool, tool), fmt.Sprintf("%v %#v", *tool.spec, *tool.spec)} {
				if strings.Contains(shown, marker) {
					t.Fatalf("an env value is shown: %s", shown)
				}
			}
			if raw, _ := json.Marshal(tool); strings.Contains(string(raw), marker) {
				t.Fatalf("an env value is in the JSON: %s", raw)
			}
		}
	})
}

// FuzzLineIndex checks that the index every problem is located with
// agrees with configfile.LineCol, which the other config files' messages
// use, at every offset of any text: lines longer than the index's marks
// included, with multi-byte and invalid sequences around them.
func FuzzLineIndex(f *testing.F) {
	for _, seed := range []string{"", "\n", "a\nb", "{\n  \"é\": \"✓\"\r\n}\n", "\xff\xfe\n\x00",
		strings.Repeat("é✓\xffa", 900),                                                // one long line, a mark every thousand bytes
		"x" + strings.Repeat("é", 1500) + "y" + strings.Repeat("\xe2\x9c", 700) + "z", // long runs without ASCII
		"{\n" + strings.Repeat(`"k": "é✓", `, 400) + "\n\"a\": 1\n" + strings.Repeat("b", 2100) + "\n}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 3*markEvery+markEvery/2 {
			data = data[:3*markEvery+markEvery/2]
		}
		x := newLineIndex(data)
		for off := -1; off <= len(data)+1; off++ {
			line, col := x.pos(off)
			wantLine, wantCol := configfile.LineCol(data, off)
			if line != wantLine || col != wantCol {
				t.Fatalf("offset %d: index says %d:%d, configfile.LineCol %d:%d", off, line, col, wantLine, wantCol)
			}
		}
	})
}

// FuzzPreviewInput feeds arbitrary call input to a tool: the preview
// either refuses it as invalid input without quoting it, or shows in its
// Subject exactly the bytes Execute would write to the program's stdin —
// one JSON object without duplicate or case-folded keys, which reads back
// as the value the subject shows.
func FuzzPreviewInput(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `{"job":"deploy"}`, `{"job":"test","Job":"deploy"}`, `{"job":"deploy","job":"test"}`,
		`{"a":{"k":1,"\u212a":2}}`, `{"a":[[[[[[1]]]]]]}`, `{"n":1E400,"s":"<&>\u2028"}`, `[]`, `null`, `{"a":1}{}`,
		`{"` + marker + `":"` + marker + `"}`,
	} {
		f.Add([]byte(seed))
	}
	p := newParser(fuzzLoader(f), "tools.json", []byte(`{"schema":1,"tools":{"t":{"description":"d","input_schema":{"type":"object"},"command":["/bin/cat"]}}}`))
	tools, problems := p.parse()
	if len(problems) > 0 || len(tools) != 1 {
		f.Fatalf("tool: %v", problems)
	}
	tool := tools[0]
	f.Fuzz(func(t *testing.T, input []byte) {
		preview, err := tool.AuthorizationPreview(context.Background(), contract.Call{Input: input})
		stdin, checkErr := tool.checkInput(context.Background(), input)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("preview and Execute disagree: %v / %v", err, checkErr)
		}
		if err != nil {
			if !errors.Is(err, contract.ErrInvalidInput) || strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal %q is not a clean invalid-input error", err)
			}
			return
		}
		var subject map[string]json.RawMessage
		if err := json.Unmarshal(preview.Subject, &subject); err != nil {
			t.Fatalf("subject is not JSON: %v", err)
		}
		if string(subject["input"]) != string(stdin) {
			t.Fatalf("subject input %s differs from stdin %s", subject["input"], stdin)
		}
		again, err := contract.CanonicalInput(stdin)
		if err != nil || string(again) != string(stdin) {
			t.Fatalf("stdin is not canonical: %s (%v)", again, err)
		}
	})
}
