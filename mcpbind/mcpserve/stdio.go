package mcpserve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport speaks MCP over r and w: the process's own stdin and
// stdout when they are those, else the two as given (a test's pipes),
// which closing the transport leaves open.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	if r == os.Stdin && w == os.Stdout {
		return &mcp.StdioTransport{}
	}
	return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// LineLogger returns a logger that writes each record's message, after
// prefix, as one line of w — a server's stderr, where concurrent calls'
// lines must not interleave. Levels and attributes are not shown.
func LineLogger(w io.Writer, prefix string) *slog.Logger {
	return slog.New(lineHandler{&lockedWriter{w: w}, prefix})
}

// lockedWriter serialises the lines of concurrent calls.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

type lineHandler struct {
	w      *lockedWriter
	prefix string
}

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h lineHandler) WithGroup(string) slog.Handler            { return h }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	_, err := fmt.Fprintf(h.w.w, "%s%s\n", h.prefix, r.Message)
	return err
}
