//go:build unix

// Package runtime wires basis together: a roster of tools from every
// binding, checked for reserved names and collisions; one pipeline every
// call goes through; batches of calls from one model turn; and the roster
// exported as provider tool definitions for hosts that drive their own
// model loop. It imports no binding: a host registers the tools of the
// bindings it chose, and its module graph holds only those.
//
// A host builds a [Runtime] with a [Builder]; [Tools] turns a binding's
// typed slice into the tools Add takes:
//
//	b := runtime.NewBuilder()
//	if err := b.Add(runtime.Tools(declaredTools)...); err != nil { ... } // .basis/tools.json
//	if err := b.Add(myHostTool); err != nil { ... }                       // the host's own
//	if err := b.AddMCP(runtime.Tools(mcpTools)...); err != nil { ... }    // mcp__<server>__<tool>, or a server's own prefix
//	rt, err := b.Build(&runtime.Options{Gate: gate})
//	out := rt.Call(ctx, "jenkins_job", contract.Call{ID: id, Input: args})
//
// Registration is all-or-nothing: an Add that fails adds none of its tools,
// and a Build that fails returns no runtime. Reserved names are refused in
// any letter case: [contract.SpawnName] belongs to the spawn binding, and
// the [contract.MCPPrefix] to tools registered with AddMCP (which may also
// carry other names, when a server is configured with a prefix of its own).
//
// Every call goes through the same steps, and stops at the first that
// refuses it:
//
//  1. the tool is looked up; an unknown name is refused with the closest
//     names;
//  2. the input is read strictly into its canonical bytes
//     ([contract.CanonicalInput]: a duplicate key, keys equal under case
//     folding, nesting too deep are refused) and checked against the
//     tool's input schema, compiled once at build;
//  3. the tool's authorization preview describes the call; an error is a
//     refusal in the tool's words (an unavailable tool refuses here);
//  4. the gate decides;
//  5. with an audit log, a start record of what is about to run is
//     written; a consequential call whose start record cannot be written
//     is refused ([StageAudit]) and does not run;
//  6. the tool executes under its own timeout, or the runtime's default;
//     the runtime's deadline backs a tool's own up and never pre-empts
//     it, and a timeout's text names the limit that fired and the setting
//     that raises it;
//  7. the end record, how the call ended, is written (a refused call has
//     only this one).
//
// The preview and Execute receive the same canonical input, so what the
// approver saw is what runs. A panic in a tool, or in its error's methods,
// is an outcome, never a crash. [Outcome.Err] tells the refusals apart
// with errors.Is: [ErrUnknownTool], [contract.ErrInvalidInput],
// [contract.ErrRefused], [ErrDenied], [ErrAuditFailed]; a timeout is a
// [*TimeoutError].
//
// The roster can change while calls run: [Runtime.ReplaceSource] and
// [Runtime.ReplaceMCPSource] swap one source's tools (a reloaded manifest,
// an MCP server's tools/list_changed) under the same checks, all or
// nothing, and [Runtime.Changed] tells watchers. A call or a batch runs on
// the roster it started with.
package runtime
