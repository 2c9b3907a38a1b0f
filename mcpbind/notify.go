//go:build unix

//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 (SEP-2577) but works through its deprecation window, and a gateway passes on what servers log (issue 22)

package mcpbind

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLevels are MCP's logging levels, least first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// progressStep passes a progress notification for one of the server's
// calls on to the caller's context, as counted ([contract.ReportProgress]).
func (s *server) progressStep(c *conn, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	v, ok := s.progress.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	contract.ReportProgress(v.(context.Context), contract.ProgressStep{Progress: p.Progress, Total: p.Total, Message: c.launch.redact(p.Message)})
}

// logging is a server's log messages' way to its callers: the calls in
// flight that take log messages, and the level the server was last asked
// for on its session (protocols before 2026-07-28; later ones carry the
// level in each request).
type logging struct {
	mu    sync.Mutex
	calls map[*context.Context]struct{}
	level string // set on the session; "" for none
}

// watch registers a call's context for the server's log messages until
// the returned function is called; it asks the server, on protocols that
// set the level per session, for the context's level when that is lower
// than the one it has.
func (s *server) watchLog(ctx context.Context, c *conn, params *mcp.CallToolParams) (done func()) {
	level := contract.LogLevel(ctx)
	if level == "" {
		return func() {}
	}
	if newProtocol(c.session) {
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta[mcp.MetaKeyLogLevel] = level
	} else if res := c.session.InitializeResult(); res != nil && res.Capabilities != nil && res.Capabilities.Logging != nil {
		s.logs.mu.Lock()
		lower := s.logs.level == "" || slices.Index(logLevels, level) < slices.Index(logLevels, s.logs.level)
		if lower {
			s.logs.level = level
		}
		s.logs.mu.Unlock()
		if lower {
			// Forwarded as the client asked; a failure leaves the
			// server's default, which is no logs.
			_ = c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)})
		}
	}
	key := &ctx
	s.logs.mu.Lock()
	if s.logs.calls == nil {
		s.logs.calls = map[*context.Context]struct{}{}
	}
	s.logs.calls[key] = struct{}{}
	s.logs.mu.Unlock()
	return func() {
		s.logs.mu.Lock()
		delete(s.logs.calls, key)
		s.logs.mu.Unlock()
	}
}

// logMessage passes a server's log message on to every call of it in
// flight that takes log messages at that level: a server's log is not
// tied to a call, and whoever is calling it is who hears. The logger is
// the server's name, then the server's own logger's; text is cut of
// secrets.
func (s *server) logMessage(c *conn, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	logger := s.cfg.Name
	if p.Logger != "" {
		logger += "/" + c.launch.redact(p.Logger)
	}
	data := redactJSON(p.Data, c.launch)
	if data == nil {
		data = []byte(`null`)
	}
	m := contract.LogMessage{Level: string(p.Level), Logger: logger, Data: data}
	s.logs.mu.Lock()
	var to []context.Context
	for k := range s.logs.calls {
		to = append(to, *k)
	}
	s.logs.mu.Unlock()
	at := slices.Index(logLevels, m.Level)
	for _, ctx := range to {
		if at >= slices.Index(logLevels, contract.LogLevel(ctx)) {
			contract.Log(ctx, m)
		}
	}
}

// newProtocol reports whether the session speaks 2026-07-28 or later,
// where a request carries its log level.
func newProtocol(cs *mcp.ClientSession) bool {
	res := cs.InitializeResult()
	return res != nil && res.ProtocolVersion >= "2026-07-28"
}
