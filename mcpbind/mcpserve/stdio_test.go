package mcpserve_test

import (
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LineLogger writes each message as one prefixed line, whole, however
// many goroutines log at once; attributes are not shown.
func TestLineLogger(t *testing.T) {
	var out strings.Builder
	log := mcpserve.LineLogger(&out, "basis serve: ")
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { log.Info("a call ended", "tool", "x") })
	}
	wg.Wait()
	log.With("k", "v").WithGroup("g").Error("last")
	want := strings.Repeat("basis serve: a call ended\n", 50) + "basis serve: last\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// StdioTransport is the SDK's own on the process's stdin and stdout, and
// speaks over the two given otherwise.
func TestStdioTransport(t *testing.T) {
	if _, ok := mcpserve.StdioTransport(os.Stdin, os.Stdout).(*mcp.StdioTransport); !ok {
		t.Error("on os.Stdin and os.Stdout: not an *mcp.StdioTransport")
	}
	r, w := io.Pipe()
	if _, ok := mcpserve.StdioTransport(r, w).(*mcp.IOTransport); !ok {
		t.Error("on a pipe: not an *mcp.IOTransport")
	}
}
