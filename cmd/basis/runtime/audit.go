//go:build unix

package runtime

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// AuditRecord is one line of the audit log: what was asked, what was
// decided and by whom, and how it ended. It carries the preview's Subject —
// built by every binding to hold no secret — and never an environment
// value, a result or a tool's output.
type AuditRecord struct {
	Time       time.Time            `json:"time"`
	CallID     string               `json:"call_id,omitempty"`
	Tool       string               `json:"tool"`
	Binding    string               `json:"binding,omitempty"`
	Source     string               `json:"source,omitempty"`
	SideEffect *contract.SideEffect `json:"side_effect,omitempty"`
	// Subject is the preview's Subject, byte for byte the text rules
	// matched (it is canonical JSON, so it is never re-indented or
	// escaped here).
	Subject json.RawMessage `json:"subject,omitempty"`
	Verdict *AuditVerdict   `json:"verdict,omitempty"`
	Outcome Status          `json:"outcome"`
	Stage   Stage           `json:"stage,omitempty"`
	// Refusal is basis's own refusal text (unknown tool, invalid input,
	// preview refusal, denial). A tool's failure text is not recorded: it
	// may carry whatever the program printed.
	Refusal    string     `json:"refusal,omitempty"`
	DurationMS float64    `json:"duration_ms"`
	Exit       *AuditExit `json:"exit,omitempty"`
}

// AuditVerdict is the gate's decision in an [AuditRecord].
type AuditVerdict struct {
	Allow  bool   `json:"allow"`
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
	// Rule describes the deciding rule, when a rule decided.
	Rule string `json:"rule,omitempty"`
}

// AuditExit is how a tool's program ended, when it failed.
type AuditExit struct {
	Kind   string `json:"kind"`
	Code   int    `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
}

// auditor serializes records onto one writer.
type auditor struct {
	mu      sync.Mutex
	w       io.Writer
	onError func(error)
}

func (a *auditor) record(start time.Time, r *registered, out *Outcome) {
	rec := AuditRecord{
		Time:       start.UTC(),
		CallID:     out.CallID,
		Tool:       out.Tool,
		Outcome:    out.Status,
		Stage:      out.Stage,
		DurationMS: float64(out.Duration.Microseconds()) / 1000,
	}
	if r != nil {
		rec.Binding, rec.Source = r.desc.Binding, r.source
	}
	if out.Preview != nil {
		se := out.Preview.SideEffect
		rec.SideEffect, rec.Subject = &se, out.Preview.Subject
	}
	if v := out.Verdict; v != nil {
		rec.Verdict = &AuditVerdict{Allow: v.Allow, Source: v.Source.String(), Reason: v.Reason}
		if v.Rule != nil {
			rec.Verdict.Rule = v.Rule.String()
		}
	}
	if out.Status == StatusRefused {
		rec.Refusal = out.Text
	}
	if e := out.Exit; e != nil {
		rec.Exit = &AuditExit{Kind: e.Kind.String(), Code: e.Code}
		if e.Signal != 0 {
			rec.Exit.Signal = subprocess.SignalName(e.Signal)
		}
	}
	line, err := encodeRecord(&rec)
	if err == nil {
		a.mu.Lock()
		_, err = a.w.Write(line)
		a.mu.Unlock()
	}
	if err != nil && a.onError != nil {
		a.onError(err)
	}
}

// encodeRecord writes one line without HTML escaping, so the subject holds
// the same bytes rules matched ("&&", not "\u0026\u0026"). A subject that
// is not JSON at all, which no binding should produce, is kept as a JSON
// string, so the call is still on record and the line stays one line.
func encodeRecord(rec *AuditRecord) ([]byte, error) {
	if len(rec.Subject) > 0 && !json.Valid(rec.Subject) {
		quoted, err := encodeNoHTML(string(rec.Subject))
		if err != nil {
			return nil, err
		}
		rec.Subject = bytes.TrimSuffix(quoted, []byte("\n"))
	}
	return encodeNoHTML(rec)
}

// encodeNoHTML is json.Marshal without HTML escaping, followed by a
// newline.
func encodeNoHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
