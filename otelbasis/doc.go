//go:build unix

// Package otelbasis records the calls of a basis runtime as OpenTelemetry
// spans and metrics, in the GenAI semantic conventions: an
// "execute_tool {tool}" span per call with basis's own attributes (the
// gate's decision and the layer that made it, the sandbox mode, the side
// effect, the source), a child span for each phase (preview, gate,
// execute), the gen_ai.execute_tool.duration histogram and a counter of
// denials by layer.
//
// An [Observer] is a [runtime.Observer]: pass it as
// [runtime.Options.Observer] (or workspace.RuntimeOptions.Observer), with
// the host's own TracerProvider and MeterProvider. It never exports
// anything itself; the exporter is the host's choice. Arguments and
// results are recorded only when [Options] asks for them.
//
// [Observer.StartMCPRequest] makes mcpbind's requests to MCP servers
// "{mcp.method.name} {target}" client spans in the MCP conventions
// (pass the Observer as mcpbind.ManagerOptions.Observer), and
// [Observer.StartServedRequest] makes the requests an mcpserve.Server
// answers server spans, parents of the calls they start (pass it as
// mcpserve.ServerOptions.Observer).
//
// The execute phase's context carries its span as a
// [contract.TraceContext], which a declared tool's program receives as
// TRACEPARENT.
//
// Package [github.com/basis-go/basis/otelbasis/otlpenv] sets up export
// over OTLP from the standard OTEL_* variables, as the basis command does;
// this package links no exporter.
//
// The attribute table and an example of the span tree:
// docs/observability.md.
package otelbasis
