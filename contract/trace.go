package contract

import "context"

type traceKey struct{}

// TraceContext is a W3C trace context (https://www.w3.org/TR/trace-context/):
// the values of the traceparent and tracestate headers. A tool hands it on
// to what it starts — a declared tool's program as TRACEPARENT and
// TRACESTATE in its environment — so the work joins the caller's trace.
type TraceContext struct {
	// Parent is the traceparent, such as
	// "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".
	Parent string
	// State is the tracestate, often empty.
	State string
}

// WithTraceContext returns a context carrying tc, which an observer of
// the call sets (the runtime itself knows no tracing). A tc whose Parent
// is not a valid version-00 traceparent, or whose State is longer than
// 512 bytes or holds a byte outside printable ASCII, is not carried: the
// values end up in programs' environments and in headers, and whoever
// made them may not be trusted.
func WithTraceContext(ctx context.Context, tc TraceContext) context.Context {
	if !validTraceParent(tc.Parent) || !validTraceState(tc.State) {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, tc)
}

// TraceContextOf returns the trace context ctx carries, and whether it
// carries one.
func TraceContextOf(ctx context.Context) (TraceContext, bool) {
	tc, ok := ctx.Value(traceKey{}).(TraceContext)
	return tc, ok
}

// validTraceParent reports whether s is "00-" 32 hex digits "-" 16 hex
// digits "-" 2 hex digits, lower case, with a trace ID and a parent ID
// that are not all zeros.
func validTraceParent(s string) bool {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return false
	}
	return lowerHex(s[3:35]) && lowerHex(s[36:52]) && lowerHex(s[53:55]) &&
		s[3:35] != "00000000000000000000000000000000" && s[36:52] != "0000000000000000"
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validTraceState accepts what may be a tracestate: at most 512 bytes of
// printable ASCII (the list's own grammar is the tracer's business).
func validTraceState(s string) bool {
	if len(s) > 512 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
