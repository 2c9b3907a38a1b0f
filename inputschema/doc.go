// Package inputschema compiles a tool's input schema and checks a call's
// input against it, with github.com/santhosh-tekuri/jsonschema/v6.
//
// It is the one judgment of a call's input in basis: the declared binding
// compiles a manifest's input_schema with it (at load, or at its first call:
// [Defer]), and the runtime
// compiles every other tool's schema with it at build, so a model reads
// the same words for the same mistake whatever provides the tool — the
// field's JSON pointer and the rule it breaks, never a value from the
// input or the schema (either may carry a secret).
//
// Checking one input is bounded work, whatever the schema: a budget of
// steps that grows with the input's size, and the caller's context, stop
// a schema whose alternatives recurse into exponential work (ADR 0012).
package inputschema
