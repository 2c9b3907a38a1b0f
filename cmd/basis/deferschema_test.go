//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A call compiles only the called tool's input schema: a bad schema in
// another tool of the manifest does not stop it. A call of the bad tool
// is refused with the problem located in the manifest, and basis check,
// which compiles every schema, reports it.
func TestCallCompilesOnlyTheCalledSchema(t *testing.T) {
	ws, config := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, ".basis/tools.json"), `{"schema": 1, "tools": {
  "good": {"description": "Echo.", "input_schema": {"type": "object"}, "command": ["/bin/cat"]},
  "bad": {"description": "Broken.", "input_schema": {"type": "object", "properties": {"n": {"minimum": "SECRET"}}}, "command": ["/bin/cat"]}
}}`)
	const where = ".basis/tools.json:3:"
	tests := []struct {
		args     []string
		code     int
		out, err string // each must be contained in stdout, stderr
	}{
		{[]string{"call", "good", `{"a":1}`, "--approve", "allow"}, exitOK, `{"a":1}`, ""},
		{[]string{"call", "bad", `{}`, "--approve", "allow"}, -1, "", where},
		{[]string{"check"}, -1, where, ""},
	}
	for _, tt := range tests {
		code, out, errOut := runBasis(t, ws, config, tt.args...)
		if tt.code == exitOK && code != exitOK || tt.code != exitOK && code == exitOK ||
			!strings.Contains(out, tt.out) || !strings.Contains(out+errOut, tt.err) || strings.Contains(out+errOut, "SECRET") {
			t.Errorf("basis %s: exit %d, stdout:\n%s\nstderr:\n%s", strings.Join(tt.args, " "), code, out, errOut)
		}
	}
}
