package contract

import (
	"errors"
	"fmt"
)

// SideEffect says how much of the world a call may touch. The levels are
// ordered: a larger value reaches further. A tool's [Descriptor] states the
// strongest effect the tool can have; a [Preview] states the effect of one
// call.
type SideEffect int

const (
	// SideEffectNone: the call only reads. A gate lets it pass unasked.
	SideEffectNone SideEffect = iota
	// SideEffectLocalState: the call changes state local to the agent or
	// workspace (a delegated task, a file edit) but starts no program.
	SideEffectLocalState
	// SideEffectProcess: the call runs a program on this machine.
	SideEffectProcess
	// SideEffectExternal: the call reaches beyond this machine (a network
	// service, a ticket system, a deployment).
	SideEffectExternal
)

// errUnknownSideEffect is wrapped by the error for text that names no
// side effect. No caller branches on it: a manifest reader reports the
// message, which lists the accepted words.
var errUnknownSideEffect = errors.New("unknown side effect")

var sideEffectNames = [...]string{
	SideEffectNone:       "none",
	SideEffectLocalState: "local_state",
	SideEffectProcess:    "process",
	SideEffectExternal:   "external",
}

// String returns the text form: "none", "local_state", "process" or
// "external".
func (s SideEffect) String() string {
	if s >= 0 && int(s) < len(sideEffectNames) {
		return sideEffectNames[s]
	}
	return fmt.Sprintf("SideEffect(%d)", int(s))
}

// Consequential reports whether a call with this effect must be authorized:
// everything but [SideEffectNone].
func (s SideEffect) Consequential() bool { return s != SideEffectNone }

// MarshalText implements [encoding.TextMarshaler]; JSON encodes a SideEffect
// as its text form.
func (s SideEffect) MarshalText() ([]byte, error) {
	if s < 0 || int(s) >= len(sideEffectNames) {
		return nil, fmt.Errorf("%w: %d", errUnknownSideEffect, int(s))
	}
	return []byte(sideEffectNames[s]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (s *SideEffect) UnmarshalText(text []byte) error {
	v, err := ParseSideEffect(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSideEffect returns the SideEffect whose text form is text. The error
// wraps errUnknownSideEffect and lists the accepted words; it does not
// quote text, which may come from a file whose values are not for printing.
func ParseSideEffect(text string) (SideEffect, error) {
	for i, name := range sideEffectNames {
		if text == name {
			return SideEffect(i), nil
		}
	}
	return 0, fmt.Errorf("%w: want one of none, local_state, process, external", errUnknownSideEffect)
}
