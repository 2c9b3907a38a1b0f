package contract

import (
	"context"
	"encoding/json"
	"time"
)

// Capability names a kind of access a tool or a call needs. The set is open:
// bindings may use words of their own; the constants are the shared ones.
type Capability string

// The shared capabilities.
const (
	CapabilityProcessExec     Capability = "process_exec"
	CapabilityFilesystemRead  Capability = "filesystem_read"
	CapabilityFilesystemWrite Capability = "filesystem_write"
	CapabilityNetwork         Capability = "network"
	CapabilityDelegation      Capability = "delegation"
)

// Binding names: the ways a tool reaches the contract. [Descriptor.Binding]
// holds one of these.
const (
	BindingDeclared = "declared"
	BindingSpawn    = SpawnName
	BindingMCP      = "mcp"
	BindingHost     = "host"
)

// Descriptor is what a tool says about itself, independent of any call.
type Descriptor struct {
	// Name is what the model calls the tool; see [ValidName].
	Name string
	// Description teaches the model when and how to use the tool.
	Description string
	// InputSchema is a JSON Schema object whose type is "object": the shape
	// of [Call.Input].
	InputSchema json.RawMessage
	// Capabilities lists the kinds of access the tool may need.
	Capabilities []Capability
	// SideEffect is the strongest effect the tool can have; a single call's
	// effect is in its [Preview].
	SideEffect SideEffect
	// Parallel reports whether a call may run beside other calls of the same
	// model turn.
	Parallel bool
	// Timeout bounds one call; 0 means the runtime's default.
	Timeout time.Duration
	// Binding is the way the tool was provided: one of BindingDeclared,
	// BindingSpawn, BindingMCP, BindingHost.
	Binding string
	// Source is the file or server the tool came from, for messages.
	Source string
}

// Call is one request from the model.
type Call struct {
	// ID is the provider's tool-call id, echoed in audit records.
	ID string
	// Input is the model's arguments: a JSON object.
	Input json.RawMessage
}

// Preview says what one call is about to do, before it does anything. It is
// what an approver is shown and what remembered rules match.
type Preview struct {
	// SideEffect is the effect of this call, which may be weaker than the
	// tool's declared strongest (a spawn task is local_state, a spawn
	// command is process).
	SideEffect SideEffect
	// Capabilities lists the access this call needs.
	Capabilities []Capability
	// Dir is where the call would run, when that means anything.
	Dir string
	// Subject is canonical JSON (see [CanonicalJSON]) describing the act:
	// the program and arguments, the command line, the server and tool.
	// Rules match it byte for byte, so it must never carry a secret.
	Subject json.RawMessage
	// Summary is one human line, such as
	// "run ./.basis/tools/jenkins trigger in /repo".
	Summary string
}

// Result is what a successful call gives the model to read.
//
// Text is always set: it is what a reader that knows nothing of MCP reads
// (a terminal, a model API taking text). A tool whose result is richer (an
// MCP server's images, audio, resources, structured content) also fills
// Content, Structured and Meta, which a host serving MCP passes on to its
// client unchanged.
type Result struct {
	// Text is what the model reads.
	Text string
	// Truncated reports that Text is shorter than what the tool produced.
	Truncated bool
	// Content is the result's content blocks, each one JSON object in
	// MCP's content block shape ({"type": "text" | "image" | "audio" |
	// "resource" | "resource_link", ...}), in order. Nil means Text is the
	// only content.
	Content []json.RawMessage
	// Structured is the result's structured content, a JSON object, or nil.
	Structured json.RawMessage
	// Meta is the result's _meta object, or nil.
	Meta json.RawMessage
}

// ResultError is a tool failure that comes with a result of its own, such
// as an MCP tool's isError result: the call failed with Err, and Result
// holds what the tool said (its content blocks too), for a host that
// passes failures on to an MCP client as they were.
type ResultError struct {
	Result Result
	Err    error
}

// Error returns Err's text.
func (e *ResultError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ResultError) Unwrap() error { return e.Err }

// ExecutableTool is the contract every tool implements, whatever binding
// provides it. Implementations must be safe for concurrent use.
type ExecutableTool interface {
	// Descriptor describes the tool. It is called often and must be cheap
	// and constant for the life of the value.
	Descriptor() Descriptor

	// AuthorizationPreview describes this call before anything runs. An
	// error is a refusal in its own right: no approver is asked, nothing
	// runs, and the error's text is what the model reads, so it says what
	// to do instead.
	AuthorizationPreview(ctx context.Context, call Call) (Preview, error)

	// Execute runs the call. An error is a tool failure; its text is what
	// the model reads, so it says what happened and what to do next.
	Execute(ctx context.Context, call Call) (Result, error)
}
