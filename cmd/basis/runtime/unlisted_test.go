//go:build unix

package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// A call of a tool nobody lists goes through the whole pipeline: the
// gate judges it, the audit records it, and it stays unlisted.
func TestCallUnlisted(t *testing.T) {
	tests := []struct {
		name       string
		tool       *hostTool
		input      string
		approve    approver.Decision
		wantStatus runtime.Status
		wantStage  runtime.Stage
		wantRuns   int32
	}{
		{"allowed", newHostTool("surface", contract.SideEffectExternal), `{"text":"a"}`, approver.Allow, runtime.StatusOK, runtime.StageNone, 1},
		{"denied", newHostTool("surface", contract.SideEffectExternal), `{"text":"a"}`, approver.Deny, runtime.StatusRefused, runtime.StageDenied, 0},
		{"invalid input", newHostTool("surface", contract.SideEffectExternal), `{"text":1}`, approver.Allow, runtime.StatusRefused, runtime.StageInvalid, 0},
		{"a name only MCP tools may carry", newHostTool("mcp__x", contract.SideEffectExternal), `{"text":"a"}`, approver.Allow, runtime.StatusRefused, runtime.StageUnknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			appr := &countingApprover{decision: tt.approve}
			var audit bytes.Buffer
			rt := build(t, &runtime.Options{Gate: newGate(t, appr), Audit: &audit})
			out := rt.CallUnlisted(context.Background(), tt.tool, contract.Call{ID: "c1", Input: json.RawMessage(tt.input)})
			if out.Status != tt.wantStatus || out.Stage != tt.wantStage {
				t.Errorf("status %s stage %q (%s); want %s %q", out.Status, out.Stage, out.Text, tt.wantStatus, tt.wantStage)
			}
			if n := tt.tool.executes.Load(); n != tt.wantRuns {
				t.Errorf("ran %d times, want %d", n, tt.wantRuns)
			}
			if tt.wantStage != runtime.StageUnknown && !strings.Contains(audit.String(), `"call_id":"c1","tool":"surface"`) {
				t.Errorf("the call is not in the audit:\n%s", audit.String())
			}
			if len(rt.Tools()) != 0 {
				t.Errorf("the runtime lists %d tools; the call's tool must stay unlisted", len(rt.Tools()))
			}
		})
	}
}
