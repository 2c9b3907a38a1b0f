//go:build unix

package approver

import (
	"fmt"
	"slices"
	"strings"
)

// Decision is an approver's answer to one request. The zero value is no
// decision, and the [Gate] denies.
type Decision string

const (
	// Allow lets this one call run.
	Allow Decision = "allow"
	// Deny refuses this one call.
	Deny Decision = "deny"
	// AllowSession lets this call run and remembers it ([Remember]).
	AllowSession Decision = "allow_session"
	// DenySession refuses this call and remembers the refusal.
	DenySession Decision = "deny_session"
)

var decisions = []Decision{Allow, Deny, AllowSession, DenySession}

// Allows reports whether d is Allow or AllowSession.
func (d Decision) Allows() bool { return d == Allow || d == AllowSession }

// ForSession reports whether d is AllowSession or DenySession.
func (d Decision) ForSession() bool { return d == AllowSession || d == DenySession }

func (d Decision) valid() bool { return slices.Contains(decisions, d) }

// MarshalText refuses the zero value and any word that is no decision.
func (d Decision) MarshalText() ([]byte, error) { return marshalEnum(d, "decision", decisions) }

// UnmarshalText accepts only the words of the constants above.
func (d *Decision) UnmarshalText(text []byte) error {
	return unmarshalEnum(d, text, "decision", decisions)
}

// marshalEnum writes v, one of values.
func marshalEnum[T ~string](v T, what string, values []T) ([]byte, error) {
	if !slices.Contains(values, v) {
		return nil, enumError(what, values)
	}
	return []byte(v), nil
}

// unmarshalEnum reads text into *v when it is one of values. The error
// lists the accepted words and never quotes text.
func unmarshalEnum[T ~string](v *T, text []byte, what string, values []T) error {
	if !slices.Contains(values, T(text)) {
		return enumError(what, values)
	}
	*v = T(text)
	return nil
}

func enumError[T ~string](what string, values []T) error {
	words := make([]string, len(values))
	for i, v := range values {
		words[i] = string(v)
	}
	return fmt.Errorf("unknown %s: want one of %s", what, strings.Join(words, ", "))
}
