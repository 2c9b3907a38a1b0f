package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/otelbasis/otlpenv"
)

// telemetryFlushLimit bounds the export of what is left at exit: a
// collector that does not answer must not hold the command's exit.
const telemetryFlushLimit = 5 * time.Second

// telemetry is one invocation's OpenTelemetry, set up from the standard
// OTEL_* variables by otlpenv ([startTelemetry]).
type telemetry struct {
	t *otlpenv.Telemetry
	// obs is the observer of MCP requests, which mcp.go passes to mcpbind.
	obs    otlpenv.RequestObserver
	stderr io.Writer
}

// startTelemetry sets up export over OTLP when the environment asks for
// it (otlpenv.New); nil otherwise. A problem is reported on stderr and
// nothing is exported: telemetry never stops a call.
func startTelemetry(ctx context.Context, e *env) *telemetry {
	t, err := otlpenv.New(ctx, e.environ, &otlpenv.Options{
		ServiceVersion: moduleVersion(),
		// An export that fails is said once per problem on stderr, in
		// basis's words, rather than through the SDK's default logger.
		ExportError: func(err error) { fmt.Fprintf(e.stderr, "basis: OpenTelemetry export: %v\n", err) },
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "basis: OpenTelemetry is not exported: %v\n", err)
		return nil
	}
	if t == nil {
		return nil
	}
	return &telemetry{t: t, obs: t.RequestObserver(), stderr: e.stderr}
}

// moduleVersion is basis's module version, "(devel)" for a build from a
// checkout.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// observer is the runtime's observer: nil (no observer at all) when t is.
func (t *telemetry) observer() runtime.Observer {
	if t == nil {
		return nil
	}
	return t.t.Observer()
}

// parent returns ctx inside the trace the environment names with
// TRACEPARENT and TRACESTATE, so a call joins the trace of the agent that
// made it.
func (t *telemetry) parent(ctx context.Context, _ *env) context.Context {
	if t == nil {
		return ctx
	}
	return t.t.Parent(ctx)
}

// close exports what is left within telemetryFlushLimit, reporting a
// failure on stderr.
func (t *telemetry) close() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushLimit)
	defer cancel()
	if err := t.t.Shutdown(ctx); err != nil {
		fmt.Fprintf(t.stderr, "basis: OpenTelemetry: exporting at exit failed: %v\n", err)
	}
}
