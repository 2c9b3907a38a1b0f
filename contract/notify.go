package contract

import (
	"context"
	"encoding/json"
	"strconv"
)

type stepsKey struct{}

type logKey struct{}

// ProgressStep is one step of a call's progress as its tool counted it,
// such as an MCP server's progress notification: Progress so far, out of
// Total when that is known (0 when not), and a Message, which may be
// empty.
type ProgressStep struct {
	Progress, Total float64
	Message         string
}

// WithProgressSteps returns a context whose counted progress steps go to
// fn, as they were counted, for a host that passes them on as numbers (an
// MCP server's progress notification to its client). fn may be called
// from several goroutines at once and must not block for long. A nil fn
// removes the hook.
func WithProgressSteps(ctx context.Context, fn func(ProgressStep)) context.Context {
	return context.WithValue(ctx, stepsKey{}, fn)
}

// ReportProgress sends one counted step to the context's step hook when
// there is one, and otherwise to its line hook ([Progress]) as a line:
// the message, then the amount.
func ReportProgress(ctx context.Context, step ProgressStep) {
	if fn, _ := ctx.Value(stepsKey{}).(func(ProgressStep)); fn != nil {
		fn(step)
		return
	}
	amount := strconv.FormatFloat(step.Progress, 'g', -1, 64)
	if step.Total > 0 {
		amount += "/" + strconv.FormatFloat(step.Total, 'g', -1, 64)
	}
	line := amount
	if step.Message != "" {
		line = step.Message + " (" + amount + ")"
	}
	Progress(ctx, line)
}

// LogMessage is a log message the provider of a tool sent while a call of
// it ran, such as an MCP server's notifications/message.
type LogMessage struct {
	// Level is one of MCP's (RFC 5424's) levels: debug, info, notice,
	// warning, error, critical, alert, emergency.
	Level string
	// Logger names who logged: the server, and after a "/" its own
	// logger's name when it gave one.
	Logger string
	// Data is the message: any JSON value.
	Data json.RawMessage
}

// logHook is a context's log hook and the least level it wants.
type logHook struct {
	level string
	fn    func(LogMessage)
}

// WithLog returns a context whose log messages go to fn, which wants
// messages of level and above (one of [LogMessage.Level]'s words; a tool
// passes the level on to whatever logs, as an MCP client's
// logging/setLevel). fn may be called from several goroutines at once and
// must not block for long; it may get messages below level, and drops
// them. A nil fn or an empty level removes the hook.
func WithLog(ctx context.Context, level string, fn func(LogMessage)) context.Context {
	if fn == nil || level == "" {
		return context.WithValue(ctx, logKey{}, logHook{})
	}
	return context.WithValue(ctx, logKey{}, logHook{level, fn})
}

// Log sends one message to the context's log hook, if there is one.
func Log(ctx context.Context, m LogMessage) {
	if h, _ := ctx.Value(logKey{}).(logHook); h.fn != nil {
		h.fn(m)
	}
}

// LogLevel returns the least level the context's log hook wants, or ""
// when it has none: then nothing is to be logged.
func LogLevel(ctx context.Context) string {
	h, _ := ctx.Value(logKey{}).(logHook)
	return h.level
}
