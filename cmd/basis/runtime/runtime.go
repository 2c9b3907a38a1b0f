package runtime

import (
	"errors"
	"fmt"
	"io"
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
	// Audit, when set, receives one JSON line per call (see [AuditRecord]).
	// Writes are serialized; the writer need not be safe for concurrent
	// use.
	Audit io.Writer
	// OnAuditError, when set, is told when an audit record could not be
	// written. The call's outcome is not changed by it.
	OnAuditError func(error)
	// MaxParallel bounds how many parallel calls of one batch run at once.
	// Zero means DefaultMaxParallel.
	MaxParallel int
}

// Runtime is a built roster and the pipeline its calls go through. It is
// safe for concurrent use.
type Runtime struct {
	tools  []*registered
	byName map[string]*registered
	gate   *approver.Gate
	opts   Options
	audit  *auditor
}

type registered struct {
	entry
	schema *inputschema.Schema
}

// Build compiles every tool's input schema once and returns the runtime.
// It fails, returning no runtime, if any schema does not compile; the error
// names every such tool.
func (b *Builder) Build(opts *Options) (*Runtime, error) {
	rt := &Runtime{byName: make(map[string]*registered, len(b.entries))}
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
	var errs []error
	for _, e := range b.entries {
		sch, err := schemaFor(e.tool, e.desc)
		if err != nil {
			errs = append(errs, &RegistrationError{Name: e.desc.Name, Source: e.source, Err: fmt.Errorf("%w: input schema: %w", ErrInvalidTool, err)})
			continue
		}
		r := &registered{entry: *e, schema: sch}
		rt.tools = append(rt.tools, r)
		rt.byName[e.desc.Name] = r
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rt, nil
}

// Tools returns the descriptors of every registered tool, in registration
// order.
func (rt *Runtime) Tools() []contract.Descriptor {
	out := make([]contract.Descriptor, len(rt.tools))
	for i, r := range rt.tools {
		out[i] = r.desc
	}
	return out
}

// Tool returns the registered tool with the given name.
func (rt *Runtime) Tool(name string) (contract.ExecutableTool, bool) {
	r, ok := rt.byName[name]
	if !ok {
		return nil, false
	}
	return r.tool, true
}

func (rt *Runtime) names() []string {
	out := make([]string, len(rt.tools))
	for i, r := range rt.tools {
		out[i] = r.desc.Name
	}
	return out
}
