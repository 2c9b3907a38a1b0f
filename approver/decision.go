//go:build unix

package approver

import (
	"errors"
	"fmt"
)

// Decision is an approver's answer to one request. The zero value is no
// decision at all, and the [Gate] treats it as a denial: nothing that is not
// an answer is ever read as consent.
type Decision int

const (
	// Allow lets this one call run.
	Allow Decision = iota + 1
	// Deny refuses this one call.
	Deny
	// AllowSession lets this call run and remembers the answer for the rest
	// of the gate's life (see [Remember] for what it covers).
	AllowSession
	// DenySession refuses this call and remembers the refusal, with its
	// reason, for the rest of the gate's life.
	DenySession
)

// ErrUnknownDecision is wrapped by the error [ParseDecision] returns for a
// word that names no decision.
var ErrUnknownDecision = errors.New("unknown decision")

var decisionNames = [...]string{
	Allow:        "allow",
	Deny:         "deny",
	AllowSession: "allow_session",
	DenySession:  "deny_session",
}

// String returns the text form: "allow", "deny", "allow_session" or
// "deny_session".
func (d Decision) String() string {
	if d.valid() {
		return decisionNames[d]
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Allows reports whether the decision lets the call run: Allow or
// AllowSession.
func (d Decision) Allows() bool { return d == Allow || d == AllowSession }

// ForSession reports whether the decision is remembered: AllowSession or
// DenySession.
func (d Decision) ForSession() bool { return d == AllowSession || d == DenySession }

func (d Decision) valid() bool { return d >= Allow && d <= DenySession }

// MarshalText implements [encoding.TextMarshaler]; JSON encodes a Decision
// as its text form. The zero value and out-of-range values are an error.
func (d Decision) MarshalText() ([]byte, error) {
	if !d.valid() {
		return nil, fmt.Errorf("%w: %d is not a decision", ErrUnknownDecision, int(d))
	}
	return []byte(decisionNames[d]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (d *Decision) UnmarshalText(text []byte) error {
	v, err := ParseDecision(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDecision returns the Decision whose text form is text. The error
// wraps [ErrUnknownDecision] and lists the accepted words without quoting
// text.
func ParseDecision(text string) (Decision, error) {
	for d := Allow; d <= DenySession; d++ {
		if decisionNames[d] == text {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%w: want one of allow, deny, allow_session, deny_session", ErrUnknownDecision)
}
