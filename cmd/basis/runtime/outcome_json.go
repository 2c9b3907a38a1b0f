package runtime

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/basis-go/basis/subprocess"
)

// outcomeJSON is an Outcome's JSON form.
type outcomeJSON struct {
	CallID     string     `json:"call_id"`
	Tool       string     `json:"tool"`
	Status     string     `json:"status"`
	Stage      string     `json:"stage,omitempty"`
	Text       string     `json:"text"`
	Truncated  bool       `json:"truncated"`
	Exit       *AuditExit `json:"exit,omitempty"`
	DurationMS float64    `json:"duration_ms"`
}

// MarshalJSON is the outcome as a host prints it for a program to read
// (basis call --json): call_id, tool, status ("unknown" for none the
// runtime defines), stage (of a refusal), text, truncated, exit (how a
// failed program ended) and duration_ms. The preview, the verdict and the
// error are the audit record's.
func (o Outcome) MarshalJSON() ([]byte, error) {
	j := outcomeJSON{
		CallID:     o.CallID,
		Tool:       o.Tool,
		Status:     "unknown",
		Text:       o.Text,
		Truncated:  o.Truncated,
		DurationMS: float64(o.Duration.Microseconds()) / 1000,
	}
	if slices.Contains(statuses, o.Status) {
		j.Status = string(o.Status)
	}
	if o.Status == StatusRefused {
		j.Stage = string(o.Stage)
	}
	if x := o.Exit; x != nil {
		j.Exit = &AuditExit{Kind: x.Kind.String()}
		switch x.Kind {
		case subprocess.Exited:
			j.Exit.Code = x.Code
		case subprocess.Signaled:
			j.Exit.Signal = subprocess.SignalName(x.Signal)
		}
	}
	// The text is the model's, and is shown as it is: no HTML escapes.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
