//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
)

// Defaults for the zero values of [Options].
const (
	DefaultTimeout     = 120 * time.Second
	DefaultMaxParallel = 4
)

// Options configures a [Runtime]. A nil *Options means the defaults, which
// deny every consequential call: with no gate there is nobody to approve.
type Options struct {
	// Gate decides whether a call may run. Nil: calls whose preview says
	// SideEffectNone run, every other call is refused (fail closed).
	Gate *approver.Gate
	// DefaultTimeout bounds a call whose tool states no timeout. Zero means
	// DefaultTimeout.
	DefaultTimeout time.Duration
	// Audit, when set, receives the audit log as JSON lines (see
	// [AuditRecord]): for a call that runs, a start record before the
	// tool executes and an end record after; for a refused call, the end
	// record alone. Each record is one Write, serialized; the writer need
	// not be safe for concurrent use. A writer with a Flush() error method
	// (a *bufio.Writer) is flushed after each record.
	//
	// With an *os.File each record is one write(2): the start record is in
	// the kernel before the program starts, so a host killed mid-call
	// (even by SIGKILL) leaves it on record. The runtime does not fsync —
	// a disk flush per call would cost more than many calls, and protects
	// only against the machine itself going down; a host that needs that
	// gives a writer whose Write syncs.
	//
	// When the start record cannot be written, a call whose preview is
	// consequential is refused with [StageAudit] and does not run: an
	// audit that silently loses what ran is worse than none. A call whose
	// preview says [contract.SideEffectNone] changes nothing and runs, and
	// the failure goes to OnAuditError.
	Audit io.Writer
	// OnAuditError, when set, is told when an audit record could not be
	// written and the call was not refused for it: an end record (the
	// call's outcome stands), or the start record of a call that changes
	// nothing.
	OnAuditError func(error)
	// MaxParallel bounds how many parallel calls of one batch run at once.
	// Zero means DefaultMaxParallel.
	MaxParallel int
	// Observer, when set, is told of each call and its phases, for
	// tracing and metrics ([Observer]). Nil costs nothing.
	Observer Observer
}

// Runtime is a roster of tools and the pipeline its calls go through. It
// is safe for concurrent use, including [Runtime.ReplaceSource] beside
// calls: each call, and each batch, runs on the roster it started with.
type Runtime struct {
	roster atomic.Pointer[roster]
	// replacing serializes roster replacements; readers never take it.
	replacing sync.Mutex
	gate      *approver.Gate
	opts      Options
	audit     *auditor
}

// roster is one immutable generation of the tools. A replacement builds a
// new one and closes the old one's changed channel.
type roster struct {
	tools   []*registered
	byName  map[string]*registered
	changed chan struct{}
}

type registered struct {
	entry
	schema *inputschema.Schema
}

func newRoster(tools []*registered) *roster {
	ro := &roster{tools: tools, byName: make(map[string]*registered, len(tools)), changed: make(chan struct{})}
	for _, r := range tools {
		ro.byName[r.desc.Name] = r
	}
	return ro
}

// compile compiles each entry's input schema, refusing every tool whose
// schema does not compile.
func compile(entries []*entry) ([]*registered, error) {
	var errs []error
	out := make([]*registered, 0, len(entries))
	for _, e := range entries {
		sch, err := schemaFor(e.tool, e.desc)
		if err != nil {
			errs = append(errs, &RegistrationError{Name: e.desc.Name, Source: e.source, Err: fmt.Errorf("%w: input schema: %w", ErrInvalidTool, err)})
			continue
		}
		out = append(out, &registered{entry: *e, schema: sch})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Build compiles every tool's input schema once and returns the runtime.
// It fails, returning no runtime, if any schema does not compile; the error
// names every such tool.
func (b *Builder) Build(opts *Options) (*Runtime, error) {
	rt := &Runtime{}
	if opts != nil {
		rt.opts = *opts
	}
	if rt.opts.DefaultTimeout <= 0 {
		rt.opts.DefaultTimeout = DefaultTimeout
	}
	if rt.opts.MaxParallel <= 0 {
		rt.opts.MaxParallel = DefaultMaxParallel
	}
	rt.gate = rt.opts.Gate
	if rt.opts.Audit != nil {
		rt.audit = &auditor{w: rt.opts.Audit, onError: rt.opts.OnAuditError}
	}
	tools, err := compile(b.entries)
	if err != nil {
		return nil, err
	}
	rt.roster.Store(newRoster(tools))
	return rt, nil
}

// Tools returns the descriptors of every registered tool, in registration
// order.
func (rt *Runtime) Tools() []contract.Descriptor {
	ro := rt.roster.Load()
	out := make([]contract.Descriptor, len(ro.tools))
	for i, r := range ro.tools {
		out[i] = r.desc
	}
	return out
}

// Tool returns the registered tool with the given name.
func (rt *Runtime) Tool(name string) (contract.ExecutableTool, bool) {
	r, ok := rt.roster.Load().byName[name]
	if !ok {
		return nil, false
	}
	return r.tool, true
}

// Changed returns a channel that is closed when the roster next changes.
// Take the channel before reading the roster ([Runtime.Tools]), then wait
// on it and take a new one: a change between the two is then never
// missed. An MCP server sends notifications/tools/list_changed from such a
// loop.
func (rt *Runtime) Changed() <-chan struct{} {
	return rt.roster.Load().changed
}

// ReplaceSource replaces every tool of one source — the tools whose
// descriptor's Source (or Binding, when Source is empty) is source — with
// tools, registered as [Builder.Add] registers them: a manifest reloaded,
// say. Every tool of tools must be of that source. An empty tools removes
// the source's tools.
//
// It is all-or-nothing: the new tools go through the same name, reserved
// name and collision checks against every other source's tools, and their
// input schemas are compiled; if any is refused, the roster is unchanged
// and the error lists every refusal. Calls already running finish on the
// tool they started with; calls made after ReplaceSource returns see the
// new roster. On success, the channel of [Runtime.Changed] is closed.
func (rt *Runtime) ReplaceSource(source string, tools []contract.ExecutableTool) error {
	return rt.replace(source, false, tools)
}

// ReplaceMCPSource is [Runtime.ReplaceSource] for tools bridged from an MCP
// server, registered as [Builder.AddMCP] registers them: after the server
// sent notifications/tools/list_changed, or when it failed (an empty
// tools).
func (rt *Runtime) ReplaceMCPSource(source string, tools []contract.ExecutableTool) error {
	return rt.replace(source, true, tools)
}

func (rt *Runtime) replace(source string, mcp bool, tools []contract.ExecutableTool) error {
	if source == "" {
		return fmt.Errorf("%w: a replacement needs the source whose tools it replaces", ErrInvalidTool)
	}
	rt.replacing.Lock()
	defer rt.replacing.Unlock()
	old := rt.roster.Load()
	for _, r := range old.tools {
		if r.source == source && r.mcp != mcp {
			if r.mcp {
				return fmt.Errorf("%w: %s holds tools bridged from an MCP server; replace them with ReplaceMCPSource", ErrInvalidTool, source)
			}
			return fmt.Errorf("%w: %s holds tools that are not bridged from an MCP server; replace them with ReplaceSource", ErrInvalidTool, source)
		}
	}
	others := func(name string) *entry {
		if r := old.byName[name]; r != nil && r.source != source {
			return &r.entry
		}
		return nil
	}
	entries, err := admit(tools, mcp, others)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if e.source != source {
			errs = append(errs, &RegistrationError{Name: e.desc.Name, Source: e.source,
				Err: fmt.Errorf("%w: it is not from %s; a replacement holds only tools of the source it replaces", ErrInvalidTool, source)})
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fresh, err := compile(entries)
	if err != nil {
		return err
	}
	// The new tools take the place of the source's old ones, so the order
	// a model sees the roster in moves as little as possible.
	next := make([]*registered, 0, len(old.tools)-countOf(old, source)+len(fresh))
	placed := false
	for _, r := range old.tools {
		if r.source != source {
			next = append(next, r)
			continue
		}
		if !placed {
			next, placed = append(next, fresh...), true
		}
	}
	if !placed {
		next = append(next, fresh...)
	}
	rt.roster.Store(newRoster(next))
	close(old.changed)
	return nil
}

func countOf(ro *roster, source string) int {
	n := 0
	for _, r := range ro.tools {
		if r.source == source {
			n++
		}
	}
	return n
}

func (ro *roster) names() []string {
	out := make([]string, len(ro.tools))
	for i, r := range ro.tools {
		out[i] = r.desc.Name
	}
	return out
}
