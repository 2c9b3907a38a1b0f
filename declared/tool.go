//go:build unix

package declared

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
	"github.com/basis-go/basis/subprocess"
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
	state  *toolState
}

// toolState is what loading learned about a tool beyond its declaration.
type toolState struct {
	unavailable *UnavailableError // nil when the tool can run
	warnings    []Warning
	// programAt and cwdAt locate command[0] and cwd in the manifest, for
	// CheckStart's messages (cwdAt is nil when no cwd is given).
	programAt, cwdAt *configfile.Error
	timeoutSet       bool // timeout_ms was given
	sandbox          subprocess.Confiner
	// readOnly: sandbox is the host's read-only one, asked for by the
	// manifest's "sandbox": "read-only".
	readOnly bool
	// envDigests are the SHA-256 of each env value as written, by name,
	// for the tool's Definition; realRoot is the workspace root after
	// symlinks, for telling which files lie in it.
	envDigests map[string]string
	realRoot   string
	// workspace says the tool is a workspace manifest's: its cwd must
	// resolve inside the root, at every call.
	workspace bool
	// canonical is the canonical input this tool made last: the same
	// bytes coming back (from the runtime, or the run after its preview)
	// need not be read again.
	canonical atomic.Pointer[[]byte]
	// previewed is the confinement recent previews got, for their calls'
	// Execute (see previewedConfinements).
	previewed previewedConfinements
}

// previewedConfinements holds the confinement each recent preview got,
// by call ID, for that call's Definition and until its Execute takes it.
// The sandbox confines a run as it finds things when it starts the
// program, not as its description said, so describing the call a second
// or third time would only repeat the preview's work (a search of the
// workspace, its paths resolved). A preview whose call never runs (a
// denial) is dropped once maxPreviewed newer ones are held.
type previewedConfinements struct {
	mu    sync.Mutex
	byID  map[string]*subprocess.Confinement
	order []string // oldest first
}

// maxPreviewed bounds the confinements held for calls not run yet.
const maxPreviewed = 64

// put holds c for the call id; an empty id holds nothing.
func (p *previewedConfinements) put(id string, c *subprocess.Confinement) {
	if id == "" || c == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = make(map[string]*subprocess.Confinement)
	}
	if _, held := p.byID[id]; !held {
		if len(p.order) == maxPreviewed {
			delete(p.byID, p.order[0])
			p.order = p.order[1:]
		}
		p.order = append(p.order, id)
	}
	p.byID[id] = c
}

// peek returns the confinement held for the call id, or nil, and keeps
// it for the call's Execute.
func (p *previewedConfinements) peek(id string) *subprocess.Confinement {
	if id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byID[id]
}

// take returns and forgets the confinement held for the call id, or nil.
func (p *previewedConfinements) take(id string) *subprocess.Confinement {
	if id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, held := p.byID[id]
	if !held {
		return nil
	}
	delete(p.byID, id)
	p.order = slices.DeleteFunc(p.order, func(o string) bool { return o == id })
	return c
}

// previewView is what every preview of a tool shares, worked out once.
type previewView struct {
	cwd     string // the Subject's cwd: as written, or "."
	dir     string // the Preview's Dir
	summary string
}

var _ contract.ExecutableTool = (*Tool)(nil)

func newTool(spec *Spec, schema *inputschema.Schema, state *toolState) *Tool {
	return &Tool{
		spec:   spec,
		schema: schema,
		state:  state,
		desc: &contract.Descriptor{
			Name:         spec.Name,
			Description:  spec.Description,
			InputSchema:  withObjectType(spec.InputSchema),
			Capabilities: capabilities(spec),
			SideEffect:   spec.SideEffect,
			Parallel:     false,
			Timeout:      spec.Timeout,
			Binding:      contract.BindingDeclared,
			Source:       spec.Source,
		},
		view: newPreviewView(spec),
	}
}

// readOnlyHere reports whether the host's read-only sandbox holds t's
// program read-only here, as its descriptor then says (and so what an MCP
// client is told): asked once, at load. Each call's preview asks again.
func (t *Tool) readOnlyHere() bool {
	if !t.state.readOnly || t.state.unavailable != nil {
		return false
	}
	c, err := t.state.sandbox(t.spec.Name, false, t.view.dir)
	return err == nil && c != nil && c.ReadOnly
}

// capabilities are what a tool's program may use: it is a process, and
// it reaches the network when the manifest says so.
func capabilities(spec *Spec) []contract.Capability {
	if spec.Network {
		return []contract.Capability{contract.CapabilityProcessExec, contract.CapabilityNetwork}
	}
	return []contract.Capability{contract.CapabilityProcessExec}
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
		// An unavailable tool has no expansion: its preview refuses, and
		// Dir is then only what a listing shows.
		if dir := spec.run().dir; dir == "" || !filepath.IsAbs(dir) {
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
// leave it out: the program reads an object either way.) Only the
// top-level keys are read, without allocating or decoding the rest: this
// runs for every tool of a manifest.
func withObjectType(schema json.RawMessage) json.RawMessage {
	doc := schema[skipSpace(schema, 0):]
	if len(doc) == 0 || doc[0] != '{' || !json.Valid(schema) {
		return schema
	}
	if hasTopLevelKey(doc, "type") {
		return schema
	}
	rest := bytes.TrimSpace(schema[bytes.IndexByte(schema, '{')+1:])
	if len(rest) > 0 && rest[0] == '}' {
		return json.RawMessage(`{"type":"object"}`)
	}
	return json.RawMessage(append([]byte(`{"type":"object",`), rest...))
}

// hasTopLevelKey reports whether obj, a valid JSON object, has the key
// name at its top level, read as encoding/json reads keys (escapes
// decoded, exact case).
func hasTopLevelKey(obj []byte, name string) bool {
	i := skipSpace(obj, 1) // past {
	for i < len(obj) && obj[i] == '"' {
		end, escaped := stringEnd(obj, i)
		key := obj[i+1 : end-1]
		if escaped {
			var s string
			if json.Unmarshal(obj[i:end], &s) != nil {
				return false
			}
			key = []byte(s)
		}
		if string(key) == name {
			return true
		}
		i = skipSpace(obj, skipSpace(obj, end)+1) // past :
		i = skipSpace(obj, valueEnd(obj, i))
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that begins at b[i]
// (a quote), and whether it holds an escape.
func stringEnd(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(b), escaped
}

// valueEnd returns the index just past the valid JSON value that begins
// at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
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
	Env     []string        `json:"env"`
	Input   json.RawMessage `json:"input"`
	Program string          `json:"program"`
	// Sandbox is the confinement's description; absent without one.
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
	Tool    string          `json:"tool"`
}

// AuthorizationPreview describes the call. Subject is canonical JSON:
//
//	{"command": [...], "cwd": "...", "env": [NAMES], "input": {...}, "program": "/abs/path", "sandbox": {...}, "tool": NAME}
//
// command and cwd are as written in the manifest (placeholders
// unexpanded; cwd "." when none is given); env lists the names the
// manifest's env sets, never a value; input is the canonical form of the
// call's input — the very bytes the program will read; program is the
// absolute path command[0] resolves to in the program's own environment,
// so a PATH set in the manifest's env cannot change what runs unseen;
// sandbox, present only when [Options.Sandbox] is set, is what the sandbox
// allows the program (its [subprocess.Confinement] Subject, whose Summary
// ends the preview's Summary).
//
// It refuses, and no approver is asked: input that cannot be read
// unambiguously or does not match the schema (wrapping
// [contract.ErrInvalidInput]; an [*InputError] for the schema); an
// unavailable tool (an [*UnavailableError], wrapping
// [contract.ErrRefused]), which includes a workspace tool whose cwd
// resolves outside the workspace now; a workspace tool whose cwd does not
// exist and a program that cannot be found (wrapping [contract.ErrRefused]
// and the operating system's reason); a sandbox that cannot confine the
// program (wrapping [contract.ErrRefused] and the sandbox's error).
func (t *Tool) AuthorizationPreview(ctx context.Context, call contract.Call) (contract.Preview, error) {
	if u := t.state.unavailable; u != nil {
		return contract.Preview{}, u
	}
	input, err := t.checkInput(ctx, call.Input)
	if err != nil {
		return contract.Preview{}, err
	}
	if _, err := t.workdir(); err != nil {
		return contract.Preview{}, t.workdirRefusal(err)
	}
	program, err := t.program()
	if err != nil {
		return contract.Preview{}, &refusedError{
			msg:    t.spec.Name + " cannot run: " + t.programFault(err),
			causes: []error{contract.ErrRefused, errCannotStart, err},
		}
	}
	confinement, err := t.confinement()
	if err != nil {
		return contract.Preview{}, err
	}
	t.state.previewed.put(call.ID, confinement)
	env := t.spec.EnvNames
	if env == nil {
		env = []string{}
	}
	s := subject{Command: t.spec.Command, Cwd: t.view.cwd, Env: env, Input: input, Program: program, Tool: t.spec.Name}
	summary := t.view.summary
	if confinement != nil {
		s.Sandbox = confinement.Subject
		if confinement.Summary != "" {
			summary += "; " + confinement.Summary
		}
	}
	subj, err := contract.CanonicalJSON(s)
	if err != nil {
		return contract.Preview{}, fmt.Errorf("the input for %s cannot be described as JSON: %w", t.spec.Name, contract.ErrInvalidInput)
	}
	return contract.Preview{
		SideEffect:   t.sideEffect(confinement),
		Capabilities: capabilities(t.spec),
		Dir:          t.view.dir,
		Subject:      subj,
		Summary:      summary,
	}, nil
}

// sideEffect is the side effect of a call confined as c: none for a
// read-only entry whose confinement the host's read-only sandbox says the
// kernel holds read-only; the manifest's otherwise.
func (t *Tool) sideEffect(c *subprocess.Confinement) contract.SideEffect {
	if t.state.readOnly && c != nil && c.ReadOnly {
		return contract.SideEffectNone
	}
	return t.spec.SideEffect
}

// confinement asks the host's sandbox how this tool's program is
// confined: nil without a sandbox. A sandbox that fails, or answers with
// nothing usable, refuses the call: the program must not run unconfined.
func (t *Tool) confinement() (*subprocess.Confinement, error) {
	if t.state.sandbox == nil {
		return nil, nil
	}
	c, err := t.state.sandbox(t.spec.Name, t.spec.Network, t.view.dir)
	if err == nil && (c == nil || c.Confine == nil || !isJSONObject(c.Subject)) {
		err = errors.New("the host's sandbox gave no confinement to run it in")
	}
	if err != nil {
		return nil, &refusedError{
			msg:    t.spec.Name + " cannot run here: " + err.Error(),
			causes: []error{contract.ErrRefused, errNotConfined, err},
		}
	}
	return c, nil
}

// isJSONObject reports whether raw is one valid JSON object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// checkInput returns the bytes the program will read: the canonical form
// of the input (keys sorted, no insignificant whitespace), after refusing
// anything two JSON readers could read differently — a duplicate key, two
// keys equal under case folding, nesting too deep — and checking the
// result against the schema, which stops when ctx is done. An absent input
// (empty or blank) is the empty object.
func (t *Tool) checkInput(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
	canonical := input
	if last := t.state.canonical.Load(); last == nil || !bytes.Equal(*last, input) {
		// Input that is byte for byte the canonical form this tool made
		// last (what the runtime passes on, and the preview's for the
		// run) is canonical already: read it again only otherwise.
		var err error
		if canonical, err = contract.CanonicalInput(input); err != nil {
			return nil, fmt.Errorf("the input for %s is refused: %w", t.spec.Name, err)
		}
	}
	if err := t.schema.Check(ctx, t.spec.Name, canonical); err != nil {
		return nil, err
	}
	if len(canonical) <= maxRemembered {
		remembered := bytes.Clone(canonical)
		t.state.canonical.Store(&remembered)
	}
	return canonical, nil
}

// maxRemembered bounds the canonical input a tool remembers.
const maxRemembered = 64 << 10

// refusedError is a preview's refusal that is not about the input.
type refusedError struct {
	msg    string
	causes []error
}

func (e *refusedError) Error() string   { return e.msg }
func (e *refusedError) Unwrap() []error { return e.causes }

// Unavailable reports why the tool cannot run here: nil when it can, or
// an [*UnavailableError] naming each variable its ${VAR}s need that is
// not set. An unavailable tool is still listed, with its Descriptor; its
// preview and Execute refuse with this same error. `basis check` reports
// it as a problem.
func (t *Tool) Unavailable() error {
	if u := t.state.unavailable; u != nil {
		return u
	}
	return nil
}

// Warnings returns what in the tool's declaration works but should
// change: each command argument that puts a credential-looking ${VAR} on
// the command line. None is an error; `basis check` prints them.
func (t *Tool) Warnings() []Warning { return slices.Clone(t.state.warnings) }

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
