// Package runtime wires basis together: a roster of tools from every
// binding, checked for reserved names and collisions; one pipeline every
// call goes through — schema validation, the tool's authorization preview,
// the gate, execution under a timeout, an audit record; batches of calls
// from one model turn; and the roster exported as provider tool definitions
// for hosts that drive their own model loop.
//
// A host builds a [Runtime] with a [Builder]:
//
//	b := runtime.NewBuilder()
//	if err := b.Add(declaredTools...); err != nil { ... }   // .basis/tools.json
//	if err := b.Add(myHostTool); err != nil { ... }         // the host's own
//	rt, err := b.Build(&runtime.Options{Gate: gate})
//	out := rt.Call(ctx, "jenkins_job", contract.Call{ID: id, Input: args})
//
// Registration is all-or-nothing: an Add that fails adds none of its tools,
// and a Build that fails returns no runtime.
package runtime
