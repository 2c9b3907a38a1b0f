package examples_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bin holds the example tools, built once from this module.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "basis-example-tools")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./tools/...")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example tools:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runTool runs one example tool in the example workspace (or dir) with the
// input on stdin, as basis would.
func runTool(t *testing.T, dir, tool, input string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, tool))
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestWordCount(t *testing.T) {
	tests := []struct{ input, out, err string }{
		{`{"text": "one two\nthree"}`, "the text: 2 lines, 3 words, 13 characters\n", ""},
		{`{"text": ""}`, "the text: 0 lines, 0 words, 0 characters\n", ""},
		{`{"path": "data/notes.txt"}`, "data/notes.txt: 2 lines, 14 words, 82 characters\n", ""},
		{`{"path": "../etc/passwd"}`, "", "path must be a relative path inside the workspace"},
		{`{}`, "", "give text to count"},
		{`{"text": "x", "path": "y"}`, "", "not both"},
	}
	for _, tt := range tests {
		out, errText, code := runTool(t, "workspace", "word_count", tt.input)
		if out != tt.out || !strings.Contains(errText, tt.err) || (tt.err != "") != (code != 0) {
			t.Errorf("%s: stdout %q stderr %q exit %d", tt.input, out, errText, code)
		}
	}
}

func TestJSONQuery(t *testing.T) {
	tests := []struct{ input, out, err string }{
		{`{"file": "data/inventory.json", "path": "items.2.name"}`, "bracket\n", ""},
		{`{"file": "data/inventory.json", "path": "items.0.count"}`, "1200\n", ""},
		{`{"file": "data/inventory.json", "path": "warehouse"}`, "north\n", ""},
		{`{"file": "data/inventory.json", "path": "items.9"}`, "", `$.items is a list of 3; "9" is not an index in it`},
		{`{"file": "data/inventory.json", "path": "shelves"}`, "", `$ has no key "shelves"; its keys are "items", "warehouse"`},
		{`{"file": "/etc/hostname", "path": ""}`, "", "inside the workspace"},
	}
	for _, tt := range tests {
		out, errText, code := runTool(t, "workspace", "json_query", tt.input)
		if out != tt.out || !strings.Contains(errText, tt.err) || (tt.err != "") != (code != 0) {
			t.Errorf("%s: stdout %q stderr %q exit %d", tt.input, out, errText, code)
		}
	}
}

func TestTicketAppendsAndNumbers(t *testing.T) {
	dir := t.TempDir()
	for i, title := range []string{"first", "second"} {
		out, _, code := runTool(t, dir, "ticket", fmt.Sprintf(`{"title": %q}`, title), "TICKET_QUEUE=ops")
		want := fmt.Sprintf("filed ticket #%d in queue ops: %s (normal priority)\n", i+1, title)
		if code != 0 || out != want {
			t.Errorf("ticket %d: %q exit %d, want %q", i+1, out, code, want)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "tickets", "tickets.jsonl"))
	if err != nil || strings.Count(string(data), "\n") != 2 || !strings.Contains(string(data), `"queue":"ops"`) {
		t.Errorf("ledger: %v\n%s", err, data)
	}
	if _, errText, code := runTool(t, dir, "ticket", `{"title": "x"}`); code == 0 || !strings.Contains(errText, "TICKET_QUEUE is not set") {
		t.Errorf("without a queue: exit %d, %q", code, errText)
	}
}
