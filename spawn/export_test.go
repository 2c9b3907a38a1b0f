//go:build unix

package spawn

// The kinds of refusal and of bad options, for the tests' errors.Is
// checks: a caller tells them apart by type and by contract's sentinels,
// but the tests hold each error to its exact kind.
var (
	ErrUnknownTarget  = errUnknownTarget
	ErrCommandsOff    = errCommandsOff
	ErrNoDelegator    = errNoDelegator
	ErrDepthExceeded  = errDepthExceeded
	ErrNotConfined    = errNotConfined
	ErrInvalidOptions = errInvalidOptions
	ErrInvalidTarget  = errInvalidTarget
)
