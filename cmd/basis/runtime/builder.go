//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// Registration errors, for [errors.Is]. Every one arrives inside a
// *[RegistrationError] naming the tool and its source. A host that builds
// its roster from sources it does not control (a workspace's manifest, an
// MCP server) branches on them to drop the offending tool and keep the
// rest, or to tell the author to rename it.
var (
	// ErrInvalidName is [contract.ErrInvalidName] itself, so an invalid
	// name is one error whichever package a host checks it with.
	ErrInvalidName = contract.ErrInvalidName
	// ErrReservedName: the name is spawn's or starts with mcp__ outside
	// AddMCP, in any letter case.
	ErrReservedName = errors.New("reserved tool name")
	// ErrCollision: two tools have the same name.
	ErrCollision = errors.New("tool name collision")
	// ErrInvalidTool: a nil tool, a Descriptor that panics, an input
	// schema that does not compile, or a replacement of the wrong source.
	ErrInvalidTool = errors.New("invalid tool")
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

// Error names the tool, its source and the reason; for a collision, both
// sources.
func (e *RegistrationError) Error() string {
	if e.OtherSource != "" {
		return fmt.Sprintf("tool %q from %s collides with tool %q from %s: rename one of them", e.Name, e.Source, e.Name, e.OtherSource)
	}
	return fmt.Sprintf("tool %q from %s: %v", e.Name, e.Source, e.Err)
}

// Unwrap returns the reason, so errors.Is finds the sentinel.
func (e *RegistrationError) Unwrap() error { return e.Err }

// Tools converts a slice of any tool type to the []contract.ExecutableTool
// that [Builder.Add], [Builder.AddMCP] and [Runtime.ReplaceSource] take, so
// a binding's own slice (a []*declared.Tool, say) can be registered in one
// call:
//
//	err := b.Add(runtime.Tools(declaredTools)...)
func Tools[T contract.ExecutableTool](tools []T) []contract.ExecutableTool {
	out := make([]contract.ExecutableTool, len(tools))
	for i, t := range tools {
		out[i] = t
	}
	return out
}

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
	// ruleSource is the source operator rules are bound to: the
	// symlink-resolved path of the tool's manifest or MCP config,
	// approver.BuiltinSource for spawn, or "" for a host tool (which only
	// rules written for any source match).
	ruleSource string
	// mcp records that the tool was registered as bridged from an MCP
	// server, the only kind that may carry contract.MCPPrefix.
	mcp bool
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{byName: make(map[string]*entry)}
}

// Add registers tools provided by a binding other than MCP: declared tools,
// the spawn tool, a host's own. Each tool's source, for messages, is its
// descriptor's Source, or its Binding when Source is empty. [Tools] turns a
// binding's typed slice into the arguments Add takes.
//
// Add is all-or-nothing: if any tool is refused (invalid or reserved name,
// a collision with a registered tool or with another tool of the same
// call), none is added, and the error lists every refusal.
func (b *Builder) Add(tools ...contract.ExecutableTool) error {
	return b.add(false, tools)
}

// AddMCP registers tools bridged from an MCP server. Only these may carry
// the [contract.MCPPrefix] in their names, in lower case; a server
// configured with a prefix of its own (or none) offers its tools under
// other names, which pass the same checks as [Builder.Add]'s: spawn's
// name is refused, and so is a collision with any other tool.
func (b *Builder) AddMCP(tools ...contract.ExecutableTool) error {
	return b.add(true, tools)
}

func (b *Builder) add(mcp bool, tools []contract.ExecutableTool) error {
	added, err := admit(tools, mcp, func(name string) *entry { return b.byName[name] })
	if err != nil {
		return err
	}
	for _, e := range added {
		b.byName[e.desc.Name] = e
		b.entries = append(b.entries, e)
	}
	return nil
}

// admit checks tools for joining a roster whose other tools registered
// reports, and returns their entries, or an error listing every refusal.
func admit(tools []contract.ExecutableTool, mcp bool, registered func(name string) *entry) ([]*entry, error) {
	var errs []error
	pending := make(map[string]*entry, len(tools))
	added := make([]*entry, 0, len(tools))
	// A manifest's tools share their source: resolve each path once.
	resolved := map[string]string{}
	for _, tool := range tools {
		e, err := newEntry(tool, mcp, resolved)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkRegistration(e); err != nil {
			errs = append(errs, err)
			continue
		}
		name := e.desc.Name
		other := registered(name)
		if other == nil {
			other = pending[name]
		}
		if other != nil {
			errs = append(errs, &RegistrationError{Name: name, Source: e.source, OtherSource: other.source, Err: ErrCollision})
			continue
		}
		pending[name] = e
		added = append(added, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return added, nil
}

// newEntry reads a tool's descriptor once. A nil tool, or one whose
// Descriptor panics (a nil pointer in a typed slice), is refused rather
// than taking the host down. resolved holds the sources resolved already
// (see ruleSourceOf).
func newEntry(tool contract.ExecutableTool, mcp bool, resolved map[string]string) (e *entry, err error) {
	if tool == nil {
		return nil, &RegistrationError{Source: "(nil)", Err: fmt.Errorf("%w: a nil tool", ErrInvalidTool)}
	}
	defer func() {
		if v := recover(); v != nil {
			e, err = nil, &RegistrationError{Source: "(unknown)", Err: fmt.Errorf("%w: its Descriptor method panicked (%s)", ErrInvalidTool, panicText(v))}
		}
	}()
	d := tool.Descriptor()
	return &entry{tool: tool, desc: d, source: sourceOf(d), ruleSource: ruleSourceOf(d, resolved), mcp: mcp}, nil
}

// ruleSourceOf is where a tool came from, as rules name it: a rule written
// while working in one repository must never approve another repository's
// tool of the same name, so a path is resolved through symlinks once, here.
//
// An MCP tool's source is "<config file>#<server>"; its rules are bound to
// the config file, the part before the last "#": the file is what the
// operator trusted, and the tool's name already names the server.
// resolved maps the paths resolved already to their resolution, and
// learns this one's.
func ruleSourceOf(d contract.Descriptor, resolved map[string]string) string {
	source := d.Source
	if d.Binding == contract.BindingMCP {
		if i := strings.LastIndexByte(source, '#'); i >= 0 {
			source = source[:i]
		}
	}
	switch {
	case d.Binding == contract.BindingSpawn:
		return approver.BuiltinSource
	case filepath.IsAbs(source):
		if p, ok := resolved[source]; ok {
			return p
		}
		p, err := filepath.EvalSymlinks(source)
		if err != nil {
			p = filepath.Clean(source)
		}
		resolved[source] = p
		return p
	}
	return source
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

// checkRegistration applies the naming rules. Reserved names are compared
// in any letter case: "Spawn" or "MCP__x" reads to a model, and to a person
// approving a call, as the reserved one.
func checkRegistration(e *entry) error {
	d := e.desc
	refuse := func(err error) error { return &RegistrationError{Name: d.Name, Source: e.source, Err: err} }
	if err := contract.CheckName(d.Name); err != nil {
		return refuse(err) // it wraps ErrInvalidName already
	}
	switch {
	case e.mcp && contract.IsMCPName(d.Name) && !strings.HasPrefix(d.Name, contract.MCPPrefix):
		return refuse(fmt.Errorf("%w: a tool bridged from an MCP server is named %s<server>__<tool> in lower case, or under a prefix of its server's that is not %s", ErrInvalidName, contract.MCPPrefix, contract.MCPPrefix))
	case !e.mcp && contract.IsMCPName(d.Name):
		return refuse(fmt.Errorf("%w: names starting with %s, in any letter case, are reserved for tools bridged from MCP servers; rename it", ErrReservedName, contract.MCPPrefix))
	case contract.IsSpawnName(d.Name) && (d.Name != contract.SpawnName || d.Binding != contract.BindingSpawn || e.mcp):
		return refuse(fmt.Errorf("%w: %s, in any letter case, is basis's own tool for commands and delegation; rename this one", ErrReservedName, contract.SpawnName))
	}
	return nil
}
