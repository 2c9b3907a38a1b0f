package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/subprocess"
)

// TestOutcomeJSON: the JSON form holds what a program reading a call's
// result needs, and never the error, the preview or the verdict.
func TestOutcomeJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   runtime.Outcome
		want string
	}{
		{"ok, text unescaped", runtime.Outcome{CallID: "c1", Tool: "t", Status: runtime.StatusOK, Text: "<a & b>", Duration: 1500 * time.Microsecond},
			`{"call_id":"c1","tool":"t","status":"ok","text":"<a & b>","truncated":false,"duration_ms":1.5}`},
		{"refused, with its stage", runtime.Outcome{CallID: "c2", Tool: "t", Status: runtime.StatusRefused, Stage: runtime.StageDenied, Text: "no", Err: errors.New("secret")},
			`{"call_id":"c2","tool":"t","status":"refused","stage":"denied","text":"no","truncated":false,"duration_ms":0}`},
		{"failed: the exit code", runtime.Outcome{Status: runtime.StatusToolError, Exit: &subprocess.Outcome{Kind: subprocess.Exited, Code: 3}, Truncated: true},
			`{"call_id":"","tool":"","status":"tool_error","text":"","truncated":true,"exit":{"kind":"exited","code":3},"duration_ms":0}`},
		{"failed: the signal", runtime.Outcome{Status: runtime.StatusToolError, Exit: &subprocess.Outcome{Kind: subprocess.Signaled, Code: 9, Signal: syscall.SIGKILL}},
			`{"call_id":"","tool":"","status":"tool_error","text":"","truncated":false,"exit":{"kind":"signaled","signal":"SIGKILL"},"duration_ms":0}`},
		{"a status the runtime does not define is not ok", runtime.Outcome{Status: "weird", Stage: runtime.StageDenied},
			`{"call_id":"","tool":"","status":"unknown","text":"","truncated":false,"duration_ms":0}`},
	} {
		// As a host prints it: an encoder that keeps the text as it is.
		var got strings.Builder
		enc := json.NewEncoder(&got)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tc.in); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.String() != tc.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got.String(), tc.want)
		}
	}
}
