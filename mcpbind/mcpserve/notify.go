//lint:file-ignore SA1019 logging is deprecated from protocol 2026-07-28 (SEP-2577) but works through its deprecation window, and a gateway passes on what servers log (issue 22)

package mcpserve

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/basis-go/basis/contract"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLevels holds the level each session's client set with
// logging/setLevel (protocols before 2026-07-28; later ones say it in
// each request).
type logLevels struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]string
}

// setLevel is the receiving middleware that notes a session's
// logging/setLevel, so its calls ask the tools' servers for that level;
// the SDK then answers the request (and filters what it sends by it).
func (s *Server) setLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams]); ok && r.Params != nil && r.Session != nil {
			ss := r.Session
			s.levels.mu.Lock()
			if s.levels.m == nil {
				s.levels.m = map[*mcp.ServerSession]string{}
			}
			_, known := s.levels.m[ss]
			s.levels.m[ss] = string(r.Params.Level)
			s.levels.mu.Unlock()
			if !known {
				go func() {
					_ = ss.Wait()
					s.levels.mu.Lock()
					delete(s.levels.m, ss)
					s.levels.mu.Unlock()
				}()
			}
		}
		return next(ctx, method, req)
	}
}

// logLevel is the least log level the client of a call wants: the
// request's own (2026-07-28), or its session's; "" for none.
func (s *Server) logLevel(req *mcp.CallToolRequest) string {
	if req.Params != nil {
		if v, ok := req.Params.GetMeta()[mcp.MetaKeyLogLevel].(string); ok {
			return v
		}
	}
	s.levels.mu.Lock()
	defer s.levels.mu.Unlock()
	return s.levels.m[req.Session]
}

// log sends a log message of the call's tool (an upstream server's) to
// the client, on the request waiting for the call: the SDK drops it below
// the level the client asked for.
func (pc *pendingCall) log(m contract.LogMessage) {
	a := pc.attached()
	if a == nil || a.session == nil {
		return
	}
	_ = a.session.Log(a.ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(m.Level), Logger: m.Logger, Data: json.RawMessage(m.Data)})
}

// step sends a counted progress step of the call's tool (an upstream
// server's progress notification) to the client as counted, under the
// client's own progress token.
func (pc *pendingCall) step(st contract.ProgressStep) {
	a := pc.attached()
	if a == nil || a.token == nil || a.session == nil {
		return
	}
	_ = a.session.NotifyProgress(a.ctx, &mcp.ProgressNotificationParams{ProgressToken: a.token, Message: st.Message, Progress: st.Progress, Total: st.Total})
}
