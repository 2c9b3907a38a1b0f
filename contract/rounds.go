package contract

import "context"

type roundsKey struct{}

// InputRound is one round of a call in which the tool's provider asked
// the caller's client for input before it would answer, such as an MCP
// server's input-required result (SEP-2322) passed on to the client that
// made the call. It names who asked and under which keys, never what was
// asked or answered.
type InputRound struct {
	// Asker names who asked: the MCP server.
	Asker string
	// Keys are the keys the round asked under, sorted.
	Keys []string
}

// WithInputRounds returns a context whose input rounds go to fn, for a
// host that records them (a runtime's audit log: every round is on
// record). A nil fn removes the hook.
func WithInputRounds(ctx context.Context, fn func(InputRound)) context.Context {
	return context.WithValue(ctx, roundsKey{}, fn)
}

// ReportInputRound tells the context's hook of one round; without one it
// does nothing.
func ReportInputRound(ctx context.Context, r InputRound) {
	if fn, _ := ctx.Value(roundsKey{}).(func(InputRound)); fn != nil {
		fn(r)
	}
}
