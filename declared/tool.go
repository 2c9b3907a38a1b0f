package declared

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
)

// Tool is one declared tool, ready to run: it implements
// [contract.ExecutableTool]. A Tool is immutable and safe for concurrent
// use. Printing it (fmt, slog, JSON) shows the tool as written, with env
// values redacted; what the program really gets is sealed in its [Spec],
// out of reach of fmt's reflection too.
type Tool struct {
	spec   *Spec
	schema *inputschema.Schema
	desc   *contract.Descriptor
	view   *previewView
}

// previewView is what every preview of a tool shares, worked out once.
type previewView struct {
	cwd     string // the Subject's cwd: as written, or "."
	dir     string // the Preview's Dir
	summary string
}

var _ contract.ExecutableTool = (*Tool)(nil)

func newTool(spec *Spec, schema *inputschema.Schema) *Tool {
	return &Tool{
		spec:   spec,
		schema: schema,
		desc: &contract.Descriptor{
			Name:         spec.Name,
			Description:  spec.Description,
			InputSchema:  withObjectType(spec.InputSchema),
			Capabilities: []contract.Capability{contract.CapabilityProcessExec},
			SideEffect:   spec.SideEffect,
			Parallel:     false,
			Timeout:      spec.Timeout,
			Binding:      contract.BindingDeclared,
			Source:       spec.Source,
		},
		view: newPreviewView(spec),
	}
}

// newPreviewView decides what a preview shows of where the program runs.
// A cwd without placeholders is shown resolved (absolute, cleaned). A cwd
// with placeholders is shown as written — prefixed by the root when its
// expansion is relative — because the expanded path may carry a value
// nobody should see in a prompt, a rule or an audit record.
func newPreviewView(spec *Spec) *previewView {
	v := &previewView{cwd: ".", dir: spec.Root}
	switch {
	case spec.Cwd == "":
	case hasPlaceholder(spec.Cwd):
		v.cwd = spec.Cwd
		v.dir = spec.Cwd
		if !filepath.IsAbs(spec.run().dir) {
			v.dir = spec.Root + string(filepath.Separator) + spec.Cwd
		}
	default:
		v.cwd = spec.Cwd
		v.dir = spec.Cwd
		if !filepath.IsAbs(spec.Cwd) {
			v.dir = filepath.Join(spec.Root, spec.Cwd)
		}
		v.dir = filepath.Clean(v.dir)
	}
	v.summary = "run " + commandLine(spec.Command) + " in " + quoteWord(v.dir)
	return v
}

// withObjectType states "type": "object" in a schema that leaves it out, as
// the contract's descriptors and model providers expect. (The manifest may
// leave it out: the program reads an object either way.)
func withObjectType(schema json.RawMessage) json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return schema
	}
	if _, ok := top["type"]; ok {
		return schema
	}
	rest := bytes.TrimSpace(schema[bytes.IndexByte(schema, '{')+1:])
	if len(rest) > 0 && rest[0] == '}' {
		return json.RawMessage(`{"type":"object"}`)
	}
	return json.RawMessage(append([]byte(`{"type":"object",`), rest...))
}

// InputSchema returns the tool's compiled input schema, so a runtime
// checking every call need not compile it a second time.
func (t *Tool) InputSchema() *inputschema.Schema { return t.schema }

// Spec returns a copy of the tool's validated declaration.
func (t *Tool) Spec() *Spec { return t.spec.clone() }

// Descriptor describes the tool as the manifest declares it: binding
// declared, the manifest as source, capability process_exec, never
// parallel, and the manifest's timeout (or DefaultTimeout).
func (t *Tool) Descriptor() contract.Descriptor {
	d := *t.desc
	d.InputSchema = slices.Clone(d.InputSchema)
	d.Capabilities = slices.Clone(d.Capabilities)
	return d
}

// subject is the act an approver judges and a rule matches.
type subject struct {
	Command []string        `json:"command"`
	Cwd     string          `json:"cwd"`
	Input   json.RawMessage `json:"input"`
	Tool    string          `json:"tool"`
}

// AuthorizationPreview describes the call: Subject is canonical
// {"command", "cwd", "input", "tool"} with the command and cwd as written
// in the manifest (placeholders unexpanded; cwd "." when none is given),
// never the environment. Input that does not match the schema is refused
// here with an [*InputError], so no approver is asked about a call that
// cannot run.
func (t *Tool) AuthorizationPreview(ctx context.Context, call contract.Call) (contract.Preview, error) {
	input, err := t.checkInput(call.Input)
	if err != nil {
		return contract.Preview{}, err
	}
	subj, err := contract.CanonicalJSON(subject{Command: t.spec.Command, Cwd: t.view.cwd, Input: input, Tool: t.spec.Name})
	if err != nil {
		return contract.Preview{}, &InputError{Tool: t.spec.Name, Problems: []InputProblem{{Rule: "cannot be described as JSON"}}}
	}
	return contract.Preview{
		SideEffect:   t.spec.SideEffect,
		Capabilities: []contract.Capability{contract.CapabilityProcessExec},
		Dir:          t.view.dir,
		Subject:      subj,
		Summary:      t.view.summary,
	}, nil
}

// checkInput returns the bytes the program will read: the input exactly
// as given, after checking it is one JSON object matching the schema. An
// absent input (empty or blank) is the empty object.
func (t *Tool) checkInput(input json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if err := t.schema.Check(t.spec.Name, input); err != nil {
		return nil, err
	}
	return input, nil
}

// String returns "declared tool " and the [Spec] line, env values
// redacted.
func (t *Tool) String() string { return "declared tool " + t.spec.String() }

// Format implements [fmt.Formatter] with the redacted forms, for every
// verb.
func (t *Tool) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, "&declared.Tool{"+t.spec.GoString()+"}")
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(t.String()))
	default:
		fmt.Fprint(f, t.String())
	}
}

// LogValue implements [slog.LogValuer]: the [Spec]'s redacted form.
func (t *Tool) LogValue() slog.Value { return t.spec.LogValue() }

// MarshalJSON encodes the [Spec]'s redacted form.
func (t *Tool) MarshalJSON() ([]byte, error) { return t.spec.MarshalJSON() }
