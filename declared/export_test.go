//go:build unix

package declared

import "time"

// SettleFileHashes makes files hashed from now on count as changed long
// ago, as a program built in the workspace some time before is, until the
// returned function restores the clock: the cache's steady state, for
// benchmarks.
func SettleFileHashes() (restore func()) {
	fileHashes.mu.Lock()
	defer fileHashes.mu.Unlock()
	old := fileHashes.now
	fileHashes.now = func() time.Time { return time.Now().Add(time.Hour) }
	return func() {
		fileHashes.mu.Lock()
		defer fileHashes.mu.Unlock()
		fileHashes.now = old
	}
}

// The kinds of problem, for the tests' errors.Is checks: a caller tells
// problems apart by their types and contract's sentinels, but the tests
// hold each problem to its exact kind.
var (
	ErrUnreadable     = errUnreadable
	ErrSyntax         = errSyntax
	ErrSchemaVersion  = errSchemaVersion
	ErrUnknownKey     = errUnknownKey
	ErrDuplicateKey   = errDuplicateKey
	ErrMissingField   = errMissingField
	ErrWrongType      = errWrongType
	ErrReservedName   = errReservedName
	ErrInvalidSchema  = errInvalidSchema
	ErrInvalidCommand = errInvalidCommand
	ErrInvalidValue   = errInvalidValue
	ErrLoaderVariable = errLoaderVariable
	ErrUnavailable    = errUnavailable
	ErrCannotStart    = errCannotStart
	ErrNotConfined    = errNotConfined
)
