package main

// kind says how a row's figure is read and compared with its target.
type kind int

const (
	// ratioKind: ours over baseline, from "ratio", "ratio-…" or
	// "overhead-%"; the target is the largest ratio allowed.
	ratioKind kind = iota
	// absoluteKind: one metric, named by row.metric, in its unit scaled by
	// row.scale; the target is the largest value allowed.
	absoluteKind
)

// row is one line of the table: what runs, against what, and the target.
type row struct {
	// name says what is measured.
	name string
	// module is the module's directory, relative to the repository root.
	module string
	// bench is the -bench expression: a benchmark's name, anchored, with
	// a sub-benchmark after "/" where needed.
	bench string
	// match is a regular expression for the reported name the figure is
	// read from (without the -GOMAXPROCS suffix). Where the benchmark is
	// not written yet it is loose, so BenchmarkMCPCallOverSDK and
	// BenchmarkMCPCall both match; a line without the row's metric is
	// skipped.
	match string
	// baseline is what the figure is compared with.
	baseline string
	kind     kind
	// metric names the metric the figure is read from: for absoluteKind,
	// always, with scale, the factor that turns it into unit; for
	// ratioKind, when the benchmark reports several ratios.
	metric string
	scale  float64
	unit   string
	// target is the largest figure allowed; source says where it was set.
	target float64
	source string
}

// rows is every ratio the repository promises. The targets come from the
// issues and module READMEs that set them; source names each one.
var rows = []row{
	{
		name: "subprocess.Run of /bin/cat", module: "subprocess",
		bench: "^BenchmarkRunOverBareExec$", match: "^BenchmarkRunOverBareExec$",
		baseline: "exec.Command of /bin/cat in a new session, alternated", kind: ratioKind, target: 1.10, source: "subprocess/README",
	},
	{
		name: "declared tool call (schema check, run)", module: "declared",
		bench: "^BenchmarkDeclaredCallOverBareExec$", match: "^BenchmarkDeclaredCallOverBareExec$",
		baseline: "exec.Command of /bin/cat in a new session, alternated", kind: ratioKind, target: 1.07, source: "issue 25",
	},
	{
		name: "runtime call (schema, preview, gate of 1,000 rules, run, audit)", module: "cmd/basis/runtime",
		bench: "^BenchmarkRuntimeCallOverBareExec$", match: "^BenchmarkRuntimeCallOverBareExec$",
		baseline: "exec.Command of /bin/cat in a new session, alternated", kind: ratioKind, target: 1.05, source: "issue 25",
	},
	{
		name: "runtime call exported over OTLP/HTTP (otelbasis observer, otlpenv's batching exporters, a receiver in the process; tool runs /bin/cat)", module: "otelbasis",
		bench: "^BenchmarkExportOverNoObserver$/^bin-cat$", match: "^BenchmarkExportOverNoObserver/bin-cat$",
		baseline: "the same call through a runtime with no observer, alternated", kind: ratioKind, metric: "ratio", target: 1.05, source: "issue 26",
	},
	{
		name: "spawn command `echo ok`", module: "spawn",
		bench: "^BenchmarkCommandOverBareShell$", match: "^BenchmarkCommandOverBareShell$",
		baseline: "exec.Command(\"/bin/sh\", \"-c\", body) in a new session, alternated", kind: ratioKind, target: 1.20, source: "this table (the runtime's bar)",
	},
	{
		name: "gate decision, 10,000 rules", module: "approver",
		bench: "^BenchmarkGate$/^rules=10000$", match: "^BenchmarkGate/rules=10000$",
		baseline: "none: median of single decisions", kind: absoluteKind, metric: "median-ns", scale: 1e-3, unit: "µs", target: 20, source: "issue 16",
	},
	{
		name: "gate decision, 100,000 rules", module: "approver",
		bench: "^BenchmarkGateScaling$", match: "^BenchmarkGateScaling$",
		baseline: "the same decision with 100 rules, alternated", kind: ratioKind, target: 1.25, source: "this table (approver BenchmarkGateScaling: does not grow)",
	},
	{
		name: "manifest of 1,000 tools loaded", module: "declared",
		bench: "^BenchmarkLoad1000$", match: "^BenchmarkLoad1000$",
		baseline: "none: wall time per load (CPU time: e2e/README)", kind: absoluteKind, metric: "ms/op", scale: 1, unit: "ms", target: 100, source: "declared/README",
	},
	{
		name: "manifest of 1,000 tools on one line loaded (as a program may write it)", module: "declared",
		bench: "^BenchmarkLoad1000OneLine$", match: "^BenchmarkLoad1000OneLine$",
		baseline: "the same manifest as written, an entry over several lines, alternated", kind: ratioKind, metric: "ratio", target: 1.20, source: "this table (no cost for a line's length: it was 3.3x while it had one; the bound allows for medians of the eight loads a second gives)",
	},
	{
		name: "manifest of 1,000 tools loaded, every schema compiled (as basis check loads it)", module: "declared",
		bench: "^BenchmarkLoad1000OverCompile$", match: "^BenchmarkLoad1000OverCompile$",
		baseline: "jsonschema/v6 compiling the same 1,000 schemas and nothing else, alternated", kind: ratioKind, target: 1.25, source: "issue 25",
	},
	{
		name: "MCP tool call through mcpbind (in-repo stdio server)", module: "mcpbind",
		bench: "^BenchmarkMCPCall$", match: "^BenchmarkMCPCall$",
		baseline: "the same call on a bare go-sdk ClientSession, alternated", kind: ratioKind, target: 1.05, source: "issue 12",
	},
	{
		name: "8 stdio MCP servers started concurrently, each waiting 100 ms to serve", module: "mcpbind",
		bench: "^BenchmarkStartup$/^delay$", match: "^BenchmarkStartup/delay$",
		baseline: "the slowest of the 8 started alone", kind: ratioKind, target: 1.30, source: "issue 12",
	},
	{
		name: "8 stdio MCP servers started concurrently, as fast as the CPU allows, against the cores' floor", module: "mcpbind",
		bench: "^BenchmarkStartup$/^nodelay$", match: "^BenchmarkStartup/nodelay$",
		baseline: "⌈8 / cores⌉ × the slowest of the 8 started alone", kind: ratioKind, metric: "floor-ratio", target: 1.20, source: "issue 25",
	},
	{
		name: "the floor under that row: the same concurrent start against the CPU time the 8 take alone, spread over the cores (a start uses more than one core: single-cores in its lines below)", module: "mcpbind",
		bench: "^BenchmarkStartup$/^nodelay$", match: "^BenchmarkStartup/nodelay$",
		baseline: "8 × a single start's CPU time (mcpbind's and the server's) / cores", kind: ratioKind, metric: "cpu-floor-ratio", target: 1.20,
		source: "issue 25's target, against the CPU the starts need (what the 8 servers use more when started together: servers-cpu-ratio in its lines; mcpbind's own: self-cpu-ratio)",
	},
	{
		name: "basis serve, sandboxed: round trip over stdio (declared /bin/cat, confined as shipped), against a bare go-sdk server", module: "e2e",
		bench: "^BenchmarkServeStdioOverSDK$/^sandboxed$", match: "^BenchmarkServeStdioOverSDK/sandboxed$",
		baseline: "the same call to e2e/cmd/catserver (go-sdk, one tool that execs /bin/cat unconfined), alternated", kind: ratioKind, metric: "ratio", target: 1.10, source: "issue 25",
	},
	{
		name: "basis serve, no sandbox: the same with the operator's sandbox.json mode \"off\" (basis's own cost)", module: "e2e",
		bench: "^BenchmarkServeStdioOverSDK$/^nosandbox$", match: "^BenchmarkServeStdioOverSDK/nosandbox$",
		baseline: "the same call to e2e/cmd/catserver (go-sdk, one tool that execs /bin/cat unconfined), alternated", kind: ratioKind, metric: "ratio", target: 1.10, source: "issue 25",
	},
	{
		name: "basis serve, sandboxed, against a bare go-sdk server that confines the same way: basis's own cost with the sandbox on (the sandboxed row is this one times the sandbox's start: the sandboxed /bin/cat rows below)", module: "e2e",
		bench: "^BenchmarkServeStdioOverSDK$/^sandboxed-both$", match: "^BenchmarkServeStdioOverSDK/sandboxed-both$",
		baseline: "the same call to e2e/cmd/catserver -sandbox, which starts /bin/cat through the sandbox module as basis does (the default policy, in the same workspace), alternated", kind: ratioKind, metric: "ratio", target: 1.10, source: "issue 25",
	},
	{
		name: "basis serve round trip (in-memory transport, /bin/cat tool), against a bare go-sdk pair", module: "mcpbind",
		bench: "^BenchmarkServeCall$/^bin-cat$", match: "^BenchmarkServeCall/bin-cat$",
		baseline: "the same call to a bare go-sdk in-memory server whose handler calls the same roster, which execs /bin/cat (mcpserve's own cost, without basis's pipeline: the stdio rows above have it), interleaved, means", kind: ratioKind, metric: "served/bare-sdk", target: 1.10, source: "issue 25",
	},
	{
		name: "MCP gateway: a tools/call through `basis serve --http` to go-sdk's everything-server (over stdio), 2026-07-28 stateless", module: "e2e",
		bench: "^BenchmarkGatewayOverDirect$/^stateless$", match: "^BenchmarkGatewayOverDirect/stateless$",
		baseline: "the same call to everything-server's own streamable HTTP, same client and revision, alternated", kind: ratioKind, metric: "ratio", target: 1.10, source: "issue 22",
	},
	{
		name: "MCP gateway: the same, 2025-11-25 with a session", module: "e2e",
		bench: "^BenchmarkGatewayOverDirect$/^stateful$", match: "^BenchmarkGatewayOverDirect/stateful$",
		baseline: "the same call to everything-server's own streamable HTTP (-stateless=false), alternated", kind: ratioKind, metric: "ratio", target: 1.10, source: "issue 22",
	},
	{
		name: "MCP gateway's extra hop alone: the same call through a do-nothing go-sdk relay (e2e/cmd/mcprelay, everything-server over stdio), 2026-07-28 stateless", module: "e2e",
		bench: "^BenchmarkGatewayOverDirect$/^stateless$", match: "^BenchmarkGatewayOverDirect/stateless$",
		baseline: "the same call to everything-server's own streamable HTTP, alternated", kind: ratioKind, metric: "relay/direct", target: 1.10, source: "issue 22's bar, which no gateway with a process hop meets (e2e/README)",
	},
	{
		name: "MCP gateway's extra hop alone, 2025-11-25 with a session", module: "e2e",
		bench: "^BenchmarkGatewayOverDirect$/^stateful$", match: "^BenchmarkGatewayOverDirect/stateful$",
		baseline: "the same call to everything-server's own streamable HTTP (-stateless=false), alternated", kind: ratioKind, metric: "relay/direct", target: 1.10, source: "issue 22's bar, which no gateway with a process hop meets (e2e/README)",
	},
	{
		name: "MCP gateway, basis's own cost: `basis serve --http` over the do-nothing relay, 2026-07-28 stateless", module: "e2e",
		bench: "^BenchmarkGatewayOverDirect$/^stateless$", match: "^BenchmarkGatewayOverDirect/stateless$",
		baseline: "the same call through e2e/cmd/mcprelay (the same two hops), alternated", kind: ratioKind, metric: "basis/relay", target: 1.10, source: "this table (issue 22's bar, over the hop every gateway makes)",
	},
	{
		name: "MCP gateway, basis's own cost, 2025-11-25 with a session", module: "e2e",
		bench: "^BenchmarkGatewayOverDirect$/^stateful$", match: "^BenchmarkGatewayOverDirect/stateful$",
		baseline: "the same call through e2e/cmd/mcprelay (the same two hops), alternated", kind: ratioKind, metric: "basis/relay", target: 1.10, source: "this table (issue 22's bar, over the hop every gateway makes)",
	},
	{
		name: "sandboxed /bin/cat, nothing to protect", module: "sandbox",
		bench: "^BenchmarkSandboxedCat$/^empty$", match: "^BenchmarkSandboxedCat/empty$",
		baseline: "the same run unsandboxed, alternated, medians", kind: ratioKind, metric: "ratio", target: 1.15, source: "issue 14",
	},
	{
		name: "sandboxed /bin/cat in a repository (.git, .basis, .mcp.json read-only)", module: "sandbox",
		bench: "^BenchmarkSandboxedCat$/^repository$", match: "^BenchmarkSandboxedCat/repository$",
		baseline: "the same run unsandboxed, alternated, medians", kind: ratioKind, metric: "ratio", target: 1.15, source: "issue 14",
	},
	{
		name: "the floor under the two rows above: /bin/cat started from a thread confined once, as a kept thread is (the hand-off to it, the program under Landlock and the socket filter, in a PID namespace), without the search, the checks or the TMPDIR's emptying", module: "sandbox",
		bench: "^BenchmarkSandboxedCat$/^confined-floor$", match: "^BenchmarkSandboxedCat/confined-floor$",
		baseline: "the same run from the calling thread, unconfined, alternated, medians", kind: ratioKind, metric: "ratio", target: 1.15, source: "issue 25's target, against what a Go program pays for a thread's Landlock domain (the kernel binds it to a thread, so the start moves to one)",
	},
	{
		name: "sandboxed /bin/cat, nothing to protect, as uid 65534 (the trampoline's re-execution)", module: "sandbox",
		bench: "^BenchmarkSandboxedCat$/^unprivileged$", match: "^BenchmarkSandboxedCat/unprivileged$",
		baseline: "the same run unsandboxed, alternated, medians", kind: ratioKind, target: 1.15, source: "issue 25",
	},
	{
		name: "the same through the sandbox helper (basis-sandbox beside the binary, as make install puts it beside basis)", module: "sandbox",
		bench: "^BenchmarkSandboxedCat$/^unprivileged-helper$", match: "^BenchmarkSandboxedCat/unprivileged-helper$",
		baseline: "the same run unsandboxed, alternated, medians", kind: ratioKind, target: 1.15, source: "issue 25",
	},
	{
		name: "the floor under those two rows: /bin/cat cloned by os/exec into new user, PID and network namespaces, no sandbox, as uid 65534 (os/exec forks without vfork for a user namespace)", module: "sandbox",
		bench: "^BenchmarkSandboxedCat$/^unprivileged-floor$", match: "^BenchmarkSandboxedCat/unprivileged-floor$",
		baseline: "the same run without namespaces, alternated, medians", kind: ratioKind, target: 1.15, source: "issue 25's target, which the namespaces alone leave no room under (the rest is the trampoline, a Go program's start: e2e/README)",
	},
	{
		name: "`basis call` end to end (declared /bin/cat)", module: "e2e",
		bench: "^BenchmarkBasisCallOverDirect$", match: "^BenchmarkBasisCallOverDirect$",
		baseline: "running /bin/cat directly, alternated", kind: ratioKind, metric: "ratio", target: 6, source: "issue 25",
	},
	{
		name: "the floor under that row: a Go program that links santhosh-tekuri/jsonschema/v6 and runs /bin/cat, nothing else (e2e/internal/initcost/floor)", module: "e2e",
		bench: "^BenchmarkBasisCallOverDirect$", match: "^BenchmarkBasisCallOverDirect$",
		baseline: "running /bin/cat directly, alternated with the row above", kind: ratioKind, metric: "floor-ratio", target: 6, source: "issue 25's target, which the floor alone leaves no room under (basis over the floor: the over-floor figure in its lines below)",
	},
	{
		name: "the floor under every `basis call`: a Go program that only links santhosh-tekuri/jsonschema/v6 (its init() compiles every draft's metaschema)", module: "e2e",
		bench: "^BenchmarkJSONSchemaInit$", match: "^BenchmarkJSONSchemaInit$",
		baseline: "an empty Go program, alternated", kind: ratioKind, metric: "ratio", target: 1.10, source: "issue 25 (met only by the upstream fix: metaschemas compiled lazily, per draft; README, Cost)",
	},
	{
		name: "`basis call` end to end as uid 65534 (the sandbox's namespaces made by the sandbox helper beside basis, as make install puts it; the probe of them remembered from an earlier call)", module: "e2e",
		bench: "^BenchmarkBasisCallUnprivileged$", match: "^BenchmarkBasisCallUnprivileged$",
		baseline: "running /bin/cat directly as uid 65534, alternated (the same call probing again: over-probing in its lines below)", kind: ratioKind, metric: "ratio", target: 6, source: "issue 25",
	},
	{
		name: "the same without the helper: basis re-executes itself", module: "e2e",
		bench: "^BenchmarkBasisCallUnprivileged$", match: "^BenchmarkBasisCallUnprivileged$",
		baseline: "running /bin/cat directly as uid 65534, alternated with the row above (the helper's call over this one: over-self in its lines)", kind: ratioKind, metric: "self-ratio", target: 6, source: "issue 25",
	},
}
