package runtime

import (
	"errors"
	"fmt"

	"github.com/basis-go/basis/contract"
)

// SpawnName is the name basis's own spawn tool answers to. Only a tool whose
// descriptor says it is the spawn binding may use it, so no manifest or host
// tool can quietly become the model's door to commands.
const SpawnName = "spawn"

// Registration errors, for [errors.Is]. Every one arrives inside a
// *[RegistrationError] naming the tool and its source.
var (
	ErrInvalidName  = errors.New("invalid tool name")
	ErrReservedName = errors.New("reserved tool name")
	ErrCollision    = errors.New("tool name collision")
	ErrInvalidTool  = errors.New("invalid tool")
)

// RegistrationError says why a tool could not join the roster.
type RegistrationError struct {
	// Name is the tool's name and Source where it came from (a manifest
	// path, an MCP server, "host").
	Name, Source string
	// OtherSource is, for a collision, where the tool already registered
	// under the same name came from.
	OtherSource string
	// Err is the reason: one of the sentinels above, wrapping detail.
	Err error
}

func (e *RegistrationError) Error() string {
	if e.OtherSource != "" {
		return fmt.Sprintf("tool %q from %s collides with tool %q from %s: rename one of them", e.Name, e.Source, e.Name, e.OtherSource)
	}
	return fmt.Sprintf("tool %q from %s: %v", e.Name, e.Source, e.Err)
}

func (e *RegistrationError) Unwrap() error { return e.Err }

// Builder collects tools and builds a [Runtime]. It is not safe for
// concurrent use; build once, then share the Runtime.
type Builder struct {
	entries []*entry
	byName  map[string]*entry
}

type entry struct {
	tool   contract.ExecutableTool
	desc   contract.Descriptor
	source string
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{byName: make(map[string]*entry)}
}

// Add registers tools provided by a binding other than MCP: declared tools,
// the spawn tool, a host's own. Each tool's source, for messages, is its
// descriptor's Source, or its Binding when Source is empty.
//
// Add is all-or-nothing: if any tool is refused (invalid or reserved name,
// a collision with a registered tool or with another tool of the same
// call), none is added, and the error lists every refusal.
func (b *Builder) Add(tools ...contract.ExecutableTool) error {
	return b.add(false, tools)
}

// AddMCP registers tools bridged from an MCP server. Only these may carry
// the [contract.MCPPrefix] in their names, and they must.
func (b *Builder) AddMCP(tools ...contract.ExecutableTool) error {
	return b.add(true, tools)
}

func (b *Builder) add(mcp bool, tools []contract.ExecutableTool) error {
	var errs []error
	pending := make(map[string]*entry, len(tools))
	var added []*entry
	for _, tool := range tools {
		if tool == nil {
			errs = append(errs, &RegistrationError{Name: "", Source: "(nil)", Err: fmt.Errorf("%w: a nil tool", ErrInvalidTool)})
			continue
		}
		d := tool.Descriptor()
		e := &entry{tool: tool, desc: d, source: sourceOf(d)}
		if err := checkRegistration(e, mcp); err != nil {
			errs = append(errs, err)
			continue
		}
		other := b.byName[d.Name]
		if other == nil {
			other = pending[d.Name]
		}
		if other != nil {
			errs = append(errs, &RegistrationError{Name: d.Name, Source: e.source, OtherSource: other.source, Err: ErrCollision})
			continue
		}
		pending[d.Name] = e
		added = append(added, e)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, e := range added {
		b.byName[e.desc.Name] = e
		b.entries = append(b.entries, e)
	}
	return nil
}

func sourceOf(d contract.Descriptor) string {
	switch {
	case d.Source != "":
		return d.Source
	case d.Binding != "":
		return d.Binding
	}
	return contract.BindingHost
}

func checkRegistration(e *entry, mcp bool) error {
	d := e.desc
	refuse := func(err error) error { return &RegistrationError{Name: d.Name, Source: e.source, Err: err} }
	if err := contract.CheckName(d.Name); err != nil {
		return refuse(fmt.Errorf("%w: %w", ErrInvalidName, err))
	}
	switch {
	case mcp && !contract.IsMCPName(d.Name):
		return refuse(fmt.Errorf("%w: a tool bridged from an MCP server must be named %s<server>__<tool>", ErrInvalidName, contract.MCPPrefix))
	case !mcp && contract.IsMCPName(d.Name):
		return refuse(fmt.Errorf("%w: names starting with %s are reserved for tools bridged from MCP servers; rename it", ErrReservedName, contract.MCPPrefix))
	case d.Name == SpawnName && d.Binding != contract.BindingSpawn:
		return refuse(fmt.Errorf("%w: %s is basis's own tool for commands and delegation; rename this one", ErrReservedName, SpawnName))
	}
	return nil
}
