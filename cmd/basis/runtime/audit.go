//go:build unix

package runtime

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// AuditEvent says which of a call's records a line of the audit log is.
type AuditEvent string

// The events of a call. A call the runtime executes has two records, a
// start and an end with the same call id; a call refused before it could
// run (unknown tool, invalid input, preview refusal, denial, audit
// failure) has only its end record. A start with no end is a call that
// was running when its host died.
const (
	// AuditStart: the tool is about to execute. The record is handed to
	// the writer, in one Write, before the tool's Execute is called.
	AuditStart AuditEvent = "start"
	// AuditEnd: how the call ended.
	AuditEnd AuditEvent = "end"
	// AuditInput: while it ran, the tool's provider asked the caller's
	// client for input (one record a round, between start and end;
	// [contract.ReportInputRound]).
	AuditInput AuditEvent = "input"
)

// AuditRecord is one line of the audit log: what was asked, what was
// decided and by whom, and how it ended. It carries the preview's Subject —
// built by every binding to hold no secret — and never an environment
// value, a result or a tool's output.
//
// Both events decode into it. A start record holds time (when the tool
// was about to execute), event, the call, the tool, the subject and the
// verdict; it has no outcome, stage, refusal, duration_ms or exit. An end
// record holds them all; its time is when the call arrived and
// duration_ms covers the whole pipeline.
type AuditRecord struct {
	Time time.Time `json:"time"`
	// Event is AuditStart or AuditEnd.
	Event      AuditEvent           `json:"event"`
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
	// Outcome is set in an end record, and only there.
	Outcome Status `json:"outcome,omitempty"`
	Stage   Stage  `json:"stage,omitempty"`
	// Refusal is basis's own refusal text (unknown tool, invalid input,
	// preview refusal, denial, audit failure). A tool's failure text is not recorded: it
	// may carry whatever the program printed.
	Refusal    string     `json:"refusal,omitempty"`
	DurationMS float64    `json:"duration_ms"`
	Exit       *AuditExit `json:"exit,omitempty"`
	// Input is set in an input record, and only there.
	Input *AuditInputRound `json:"input,omitempty"`
}

// AuditInputRound is who asked for input in an input record, and under
// which keys; never what was asked or answered.
type AuditInputRound struct {
	Asker string   `json:"asker"`
	Keys  []string `json:"keys"`
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
	// torn reports that the last write was cut short (a full disk): the
	// next record starts on a line of its own, so the torn one is the
	// only line a reader cannot parse.
	torn bool
}

// flusher is a writer that buffers, such as a *bufio.Writer: a record
// that sits in a buffer is not on record.
type flusher interface{ Flush() error }

// start writes the start record of a call that is about to execute.
func (a *auditor) start(r *registered, call contract.Call, p *contract.Preview, v *approver.Verdict) error {
	rec := AuditRecord{Time: time.Now().UTC(), Event: AuditStart, CallID: call.ID, Tool: r.desc.Name}
	a.fill(&rec, r, p, v)
	return a.write(&rec)
}

// input writes the record of one input round of a call that runs; a
// failure goes to onError, since the call is on record already.
func (a *auditor) input(r *registered, call contract.Call, ir contract.InputRound) {
	rec := AuditRecord{Time: time.Now().UTC(), Event: AuditInput, CallID: call.ID, Tool: r.desc.Name,
		Input: &AuditInputRound{Asker: ir.Asker, Keys: ir.Keys}}
	if r != nil {
		rec.Binding, rec.Source = r.desc.Binding, r.source
	}
	a.report(a.write(&rec))
}

// end writes the end record of a call; a failure goes to onError, since
// the call's outcome stands whatever the log says.
func (a *auditor) end(start time.Time, r *registered, out *Outcome) {
	rec := AuditRecord{
		Time:       start.UTC(),
		Event:      AuditEnd,
		CallID:     out.CallID,
		Tool:       out.Tool,
		Outcome:    out.Status,
		Stage:      out.Stage,
		DurationMS: float64(out.Duration.Microseconds()) / 1000,
	}
	a.fill(&rec, r, out.Preview, out.Verdict)
	if out.Status == StatusRefused {
		rec.Refusal = out.Text
	}
	if e := out.Exit; e != nil {
		rec.Exit = &AuditExit{Kind: e.Kind.String(), Code: e.Code}
		if e.Signal != 0 {
			rec.Exit.Signal = subprocess.SignalName(e.Signal)
		}
	}
	a.report(a.write(&rec))
}

// fill sets what both records of a call say about the tool, the act and
// the decision.
func (a *auditor) fill(rec *AuditRecord, r *registered, p *contract.Preview, v *approver.Verdict) {
	if r != nil {
		rec.Binding, rec.Source = r.desc.Binding, r.source
	}
	if p != nil {
		se := p.SideEffect
		rec.SideEffect, rec.Subject = &se, p.Subject
	}
	if v != nil {
		rec.Verdict = &AuditVerdict{Allow: v.Allow, Source: string(v.Source), Reason: v.Reason}
		if v.Rule != nil {
			rec.Verdict.Rule = v.Rule.String()
		}
	}
}

func (a *auditor) report(err error) {
	if err != nil && a.onError != nil {
		a.onError(err)
	}
}

// write hands one record to the writer in one Write (with an *os.File,
// one write(2), so it is in the kernel when write returns) and flushes a
// writer that buffers.
func (a *auditor) write(rec *AuditRecord) error {
	line, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.torn {
		line = append([]byte{'\n'}, line...)
	}
	n, err := a.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if n > 0 && n <= len(line) {
		a.torn = line[n-1] != '\n'
	}
	if err == nil {
		if f, ok := a.w.(flusher); ok {
			err = f.Flush()
		}
	}
	return err
}

// encodeRecord writes one line without HTML escaping, so the subject holds
// the same bytes rules matched ("&&", not "\u0026\u0026"). A subject that
// is not JSON at all, which no binding should produce, is kept as a JSON
// string, so the call is still on record and the line stays one line.
func encodeRecord(rec *AuditRecord) ([]byte, error) {
	// appendRecord's compaction of the subject is its validation too: a
	// subject that is JSON, as every binding's is, is read once.
	if line, ok := appendRecord(make([]byte, 0, 512), rec); ok {
		return line, nil
	}
	if err := quoteInvalidSubject(rec); err != nil {
		return nil, err
	}
	if line, ok := appendRecord(make([]byte, 0, 512), rec); ok {
		return line, nil
	}
	return encodeReflect(rec)
}

// quoteInvalidSubject makes a subject that is not JSON a JSON string.
func quoteInvalidSubject(rec *AuditRecord) error {
	if len(rec.Subject) > 0 && !json.Valid(rec.Subject) {
		quoted, err := encodeNoHTML(string(rec.Subject))
		if err != nil {
			return err
		}
		rec.Subject = bytes.TrimSuffix(quoted, []byte("\n"))
	}
	return nil
}

// encodeReflect is encodeRecord through encoding/json: the reference
// appendRecord is tested against, and what encodes (or refuses, with
// encoding/json's error) a record appendRecord leaves to it.
func encodeReflect(rec *AuditRecord) ([]byte, error) {
	if rec.Event == AuditStart {
		// A start has no duration: the shallower field hides the
		// record's own duration_ms.
		type plain AuditRecord
		return encodeNoHTML(struct {
			*plain
			DurationMS *float64 `json:"duration_ms,omitempty"`
		}{plain: (*plain)(rec)})
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
