//go:build unix

package runtime_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// auditLog is an audit writer whose failures a test chooses: fail says
// what the nth Write (from 0) returns, short how many of its bytes it
// keeps before failing.
type auditLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	fail   func(n int) (keep int, err error)
}

func (l *auditLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.writes
	l.writes++
	if l.fail != nil {
		if keep, err := l.fail(n); err != nil {
			l.buf.Write(p[:keep])
			return keep, err
		}
	}
	return l.buf.Write(p)
}

func (l *auditLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// records decodes every line of an audit log; a line that is not JSON
// is kept as nil, so a test sees where it was.
func records(t *testing.T, log string) []*runtime.AuditRecord {
	t.Helper()
	var out []*runtime.AuditRecord
	for line := range strings.Lines(log) {
		var rec runtime.AuditRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			out = append(out, nil)
			continue
		}
		out = append(out, &rec)
	}
	return out
}

func enospc(int) (int, error) { return 0, &writeError{syscall.ENOSPC} }

// writeError is what an *os.File returns on a full disk, near enough.
type writeError struct{ errno syscall.Errno }

func (e *writeError) Error() string { return "write audit.jsonl: " + e.errno.Error() }
func (e *writeError) Unwrap() error { return e.errno }

// A start record that cannot be written refuses a call that would change
// something: the tool's Execute is never called, the refusal says why,
// and it matches ErrAuditFailed and the writer's error. A call that
// changes nothing runs, and the failure is reported.
func TestAnUnwritableAuditRefusesConsequentialCalls(t *testing.T) {
	tests := []struct {
		effect contract.SideEffect
		runs   bool
	}{
		{contract.SideEffectNone, true},
		{contract.SideEffectLocalState, false},
		{contract.SideEffectProcess, false},
		{contract.SideEffectExternal, false},
	}
	for _, tt := range tests {
		t.Run(tt.effect.String(), func(t *testing.T) {
			tool := newHostTool("deploy", tt.effect)
			var reported []error
			log := &auditLog{fail: enospc}
			rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: log,
				OnAuditError: func(err error) { reported = append(reported, err) }}, tool)
			out := rt.Call(t.Context(), "deploy", contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)})
			if tt.runs {
				if out.Status != runtime.StatusOK || tool.executes.Load() != 1 {
					t.Errorf("outcome %v %q, %d executions; want the read to run", out.Status, out.Text, tool.executes.Load())
				}
				// Its start and its end could not be written; both are told.
				if len(reported) != 2 || !errors.Is(reported[0], syscall.ENOSPC) {
					t.Errorf("reported %v, want the two failed writes", reported)
				}
				return
			}
			if n := tool.executes.Load(); n != 0 {
				t.Fatalf("Execute was called %d times for a call that could not be audited", n)
			}
			if out.Status != runtime.StatusRefused || out.Stage != runtime.StageAudit {
				t.Errorf("outcome %v/%v, want refused at the audit stage", out.Status, out.Stage)
			}
			if !errors.Is(out.Err, runtime.ErrAuditFailed) || !errors.Is(out.Err, syscall.ENOSPC) {
				t.Errorf("Err = %v, want ErrAuditFailed wrapping the writer's ENOSPC", out.Err)
			}
			want := "deploy was not run: its audit record could not be written (write audit.jsonl: no space left on device); " +
				"a call that cannot be audited is not run: make the audit log writable again (free space on its disk, say), then call again"
			if out.Text != want {
				t.Errorf("text %q\nwant %q", out.Text, want)
			}
			// The end record was tried too, and could not be written.
			if len(reported) != 1 || !errors.Is(reported[0], syscall.ENOSPC) {
				t.Errorf("reported %v, want the failed end record", reported)
			}
		})
	}
}

// A writer that fails for the start record and recovers leaves the end
// record of the refusal: an end with no start is a call that never ran.
func TestAnAuditThatRecoversRecordsTheRefusal(t *testing.T) {
	tool := newHostTool("deploy", contract.SideEffectProcess)
	log := &auditLog{fail: func(n int) (int, error) {
		if n == 0 {
			return enospc(n)
		}
		return 0, nil
	}}
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: log}, tool)
	rt.Call(t.Context(), "deploy", contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)})
	recs := records(t, log.String())
	if len(recs) != 1 || recs[0] == nil {
		t.Fatalf("audit log:\n%s", log.String())
	}
	got := recs[0]
	if got.Event != runtime.AuditEnd || got.CallID != "c1" || got.Outcome != runtime.StatusRefused || got.Stage != runtime.StageAudit ||
		!strings.Contains(got.Refusal, "audit record could not be written") {
		t.Errorf("record %+v, want the end of c1, refused at the audit stage", got)
	}
	if tool.executes.Load() != 0 {
		t.Error("the tool ran")
	}
}

// The start record is in the writer before Execute is called: the tool
// finds it there while it runs. The end record follows with the same
// call id. A start carries no outcome and no duration.
func TestTheStartRecordIsWrittenBeforeTheToolRuns(t *testing.T) {
	var log auditLog
	var seen string
	tool := newHostTool("deploy", contract.SideEffectProcess)
	tool.execute = func(context.Context, contract.Call) (contract.Result, error) {
		seen = log.String()
		return contract.Result{Text: "deployed"}, nil
	}
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: &log}, tool)
	rt.Call(t.Context(), "deploy", contract.Call{ID: "call-7", Input: json.RawMessage(`{"text":"x"}`)})

	var start map[string]any
	if err := json.Unmarshal([]byte(seen), &start); err != nil {
		t.Fatalf("while the tool ran, the log held %q, not one start record: %v", seen, err)
	}
	delete(start, "time")
	process := "process"
	want := map[string]any{"event": "start", "call_id": "call-7", "tool": "deploy", "binding": "host", "source": "host",
		"side_effect": process, "subject": map[string]any{"input": map[string]any{"text": "x"}, "tool": "deploy"},
		"verdict": map[string]any{"allow": true, "source": "approver", "reason": "the test approver said allow"}}
	if diff := cmp.Diff(want, start); diff != "" {
		t.Errorf("start record (-want +got):\n%s", diff)
	}
	recs := records(t, log.String())
	if len(recs) != 2 || recs[1] == nil || recs[1].Event != runtime.AuditEnd || recs[1].CallID != "call-7" || recs[1].Outcome != runtime.StatusOK {
		t.Errorf("want the start then the end of call-7:\n%s", log.String())
	}
}

// A writer that buffers is flushed after each record: a start record that
// sits in a buffer is not on record.
func TestABufferedAuditIsFlushedBeforeTheToolRuns(t *testing.T) {
	var file bytes.Buffer
	buffered := bufio.NewWriterSize(&file, 64<<10)
	var seen string
	tool := newHostTool("deploy", contract.SideEffectProcess)
	tool.execute = func(context.Context, contract.Call) (contract.Result, error) {
		seen = file.String()
		return contract.Result{Text: "deployed"}, nil
	}
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: buffered}, tool)
	rt.Call(t.Context(), "deploy", contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)})
	if recs := records(t, seen); len(recs) != 1 || recs[0] == nil || recs[0].Event != runtime.AuditStart {
		t.Errorf("while the tool ran, the file held %q; want the start record", seen)
	}
}

// A write a full disk cut short leaves a torn line; the next record starts
// on a line of its own, so only the torn line is lost to a reader.
func TestATornRecordSpoilsNoOther(t *testing.T) {
	log := &auditLog{fail: func(n int) (int, error) {
		if n == 0 {
			return 10, &writeError{syscall.ENOSPC}
		}
		return 0, nil
	}}
	tool := newHostTool("deploy", contract.SideEffectProcess)
	rt := build(t, &runtime.Options{Gate: newGate(t, &countingApprover{decision: approver.Allow}), Audit: log}, tool)
	first := rt.Call(t.Context(), "deploy", contract.Call{ID: "c1", Input: json.RawMessage(`{"text":"x"}`)})
	second := rt.Call(t.Context(), "deploy", contract.Call{ID: "c2", Input: json.RawMessage(`{"text":"x"}`)})
	if first.Stage != runtime.StageAudit || second.Status != runtime.StatusOK {
		t.Fatalf("outcomes %v/%v and %v/%v; want the first refused at the audit stage, the second run", first.Status, first.Stage, second.Status, second.Stage)
	}
	var got []string
	for _, rec := range records(t, log.String()) {
		if rec == nil {
			got = append(got, "torn")
			continue
		}
		got = append(got, string(rec.Event)+" "+rec.CallID)
	}
	if diff := cmp.Diff([]string{"torn", "end c1", "start c2", "end c2"}, got); diff != "" {
		t.Errorf("audit lines (-want +got):\n%s\n%s", diff, log.String())
	}
}
