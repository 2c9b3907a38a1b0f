package contract

import "errors"

// Sentinels every binding wraps, so a host tells the kinds of refusal apart
// with [errors.Is] whatever provides the tool.
var (
	// ErrInvalidInput: a call's input is not one JSON object, breaks the
	// tool's schema, or cannot be read unambiguously (a duplicate key,
	// nesting too deep). Nothing ran.
	ErrInvalidInput = errors.New("invalid input")
	// ErrRefused: a tool's preview refused the call (a disabled mode, an
	// unknown target, a tool that is unavailable here). Nothing ran and no
	// approver was asked.
	ErrRefused = errors.New("refused")
)
