//go:build unix

package mcpbind

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind/internal/redact"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool of an MCP server, bound to the contract; a call starts
// (or restarts) the server if needed.
type Tool struct {
	desc        contract.Descriptor
	srv         *server
	remote      string
	annotations any // the tool's annotations as the server sent them, or nil

	// The parts of every call's preview subject and definition that do
	// not change between calls, canonicalised once rather than per call.
	subjectOnce             sync.Once
	subjectHead, subjectEnd []byte
	subjectErr              error
	defMu                   sync.Mutex
	defFiles                map[string]string // the server's files def was made with
	def                     json.RawMessage
}

var _ contract.ExecutableTool = (*Tool)(nil)

// Server returns the server's name, whatever the tool's name.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// remoteName returns the tool's name on its server.
func (t *Tool) remoteName() string { return t.remote }

// Descriptor: binding "mcp", source "<config file>#<server>", side
// effect external unless the server's readOnlyHint is trusted.
func (t *Tool) Descriptor() contract.Descriptor {
	d := t.desc
	d.Capabilities = slices.Clone(d.Capabilities)
	return d
}

// AuthorizationPreview's Subject is the canonical JSON of the
// annotations, arguments, server (never an env or header value) and tool.
func (t *Tool) AuthorizationPreview(_ context.Context, call contract.Call) (contract.Preview, error) {
	args, err := contract.CanonicalInput(call.Input)
	if err != nil {
		return contract.Preview{}, err
	}
	// Canonical JSON of an object is its keys in order, each with its
	// value's canonical JSON: the parts around the arguments are made
	// once.
	t.subjectOnce.Do(func() {
		var parts [3]json.RawMessage
		for i, v := range []any{t.annotations, t.srv.subject, t.remote} {
			if parts[i], t.subjectErr = contract.CanonicalJSON(v); t.subjectErr != nil {
				return
			}
		}
		t.subjectHead = slices.Concat([]byte(`{"annotations":`), parts[0], []byte(`,"arguments":`))
		t.subjectEnd = slices.Concat([]byte(`,"server":`), parts[1], []byte(`,"tool":`), parts[2], []byte(`}`))
	})
	if t.subjectErr != nil {
		return contract.Preview{}, t.subjectErr
	}
	subject := slices.Concat(t.subjectHead, args, t.subjectEnd)
	return contract.Preview{
		SideEffect:   t.desc.SideEffect,
		Capabilities: slices.Clone(t.desc.Capabilities),
		Subject:      subject,
		Summary:      "call tool " + strconv.Quote(t.remote) + " of MCP server " + strconv.Quote(t.srv.cfg.Name) + " (" + serverSummary(t.srv.subject) + ")",
	}, nil
}

var _ contract.Definer = (*Tool)(nil)

// Definition is what an approval covers: annotations, input schema,
// name, server and the workspace files it was started from.
func (t *Tool) Definition(context.Context) (json.RawMessage, error) {
	t.srv.mu.Lock()
	files := t.srv.files
	t.srv.mu.Unlock()
	if files == nil {
		files = noFiles
	}
	// The server's files change only when it starts again, and then as a
	// new map: the definition made with this one still holds. The cache
	// keeps the map, so its address is not reused while compared.
	t.defMu.Lock()
	defer t.defMu.Unlock()
	if t.def != nil && sameMap(t.defFiles, files) {
		return slices.Clone(t.def), nil
	}
	def, err := contract.CanonicalJSON(map[string]any{
		"annotations":  t.annotations,
		"files":        files,
		"input_schema": t.desc.InputSchema,
		"server":       t.srv.definition,
		"tool":         t.remote,
	})
	if err != nil {
		return nil, err
	}
	t.defFiles, t.def = files, def
	return slices.Clone(def), nil
}

// noFiles is the files of a server that has none; never written to.
var noFiles = map[string]string{}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b map[string]string) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// serverDefinition is a server's part of its tools' definitions: its
// config entry as written, values that may be credentials left out.
func serverDefinition(cfg ServerConfig) map[string]any {
	m := map[string]any{"name": cfg.Name, "type": cfg.Type, "trust_annotations": cfg.TrustAnnotations}
	if cfg.Type == TypeStdio {
		args := cfg.Args
		if args == nil {
			args = []string{}
		}
		m["command"], m["args"], m["cwd"] = cfg.Command, args, cfg.Cwd
		m["env"] = namesOf(cfg.Env)
	} else {
		m["url"] = redact.DisplayURL(cfg.URL)
		m["headers"] = namesOf(cfg.Headers)
	}
	return m
}

func namesOf(v *Values) []string {
	if names := v.nameList(); names != nil {
		return names
	}
	return []string{}
}

// Execute calls the tool under the server's call timeout, never retried.
func (t *Tool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	args, err := contract.CanonicalInput(call.Input)
	if err != nil {
		return contract.Result{}, err
	}
	return t.srv.call(ctx, t.remote, args)
}

func asExecutable(tools []*Tool) []contract.ExecutableTool {
	out := make([]contract.ExecutableTool, len(tools))
	for i, t := range tools {
		out[i] = t
	}
	return out
}

// bind turns a server's tools into Tools, in name order. Two tools whose
// names sanitise to one are both left out and reported.
func (s *server) bind(remote []*mcp.Tool) ([]*Tool, error, error) {
	byName := map[string]string{}
	colliding := map[string]bool{}
	var errs []error
	remote, hidden := s.filter(remote)
	for _, rt := range remote {
		name := s.cfg.exposedName(rt.Name)
		if why := s.cfg.reservedProblem(rt.Name, name); why != "" {
			colliding[name] = true
			errs = append(errs, &ServerError{Server: s.cfg.Name, Op: "list tools", Err: &problem{kind: errNameCollision, text: why}})
			continue
		}
		if other, ok := byName[name]; ok {
			colliding[name] = true
			errs = append(errs, &ServerError{Server: s.cfg.Name, Op: "list tools", Err: &problem{kind: errNameCollision,
				text: "tools " + strconv.Quote(other) + " and " + strconv.Quote(rt.Name) + " both become " + name + "; neither is offered. Rename one on the server"}})
			continue
		}
		byName[name] = rt.Name
	}
	var tools []*Tool
	for _, rt := range remote {
		name := s.cfg.exposedName(rt.Name)
		if colliding[name] {
			continue
		}
		t, err := s.newTool(name, rt)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *Tool) int { return strings.Compare(a.desc.Name, b.desc.Name) })
	s.mu.Lock()
	s.hidden = hidden
	s.mu.Unlock()
	return tools, errors.Join(errs...), nil
}

// filter leaves out the tools enabled_tools and disabled_tools hide, and
// says how many it left out.
func (s *server) filter(remote []*mcp.Tool) ([]*mcp.Tool, int) {
	if s.cfg.EnabledTools == nil && s.cfg.DisabledTools == nil {
		return remote, 0
	}
	out := make([]*mcp.Tool, 0, len(remote))
	for _, rt := range remote {
		if s.cfg.offered(rt.Name) {
			out = append(out, rt)
		}
	}
	return out, len(remote) - len(out)
}

func (s *server) newTool(name string, rt *mcp.Tool) (*Tool, error) {
	schema := json.RawMessage(`{"type":"object"}`)
	if rt.InputSchema != nil {
		b, err := json.Marshal(rt.InputSchema)
		if err != nil {
			return nil, &ServerError{Server: s.cfg.Name, Op: "list tools", Err: &problem{kind: errProtocol, cause: err,
				text: "tool " + strconv.Quote(rt.Name) + " has an input schema that is not JSON"}}
		}
		if string(b) != "null" {
			schema = b
		}
	}
	desc := rt.Description
	title := rt.Title
	if title == "" && rt.Annotations != nil {
		title = rt.Annotations.Title
	}
	if title != "" {
		if desc == "" {
			desc = title
		} else {
			desc = title + ": " + desc
		}
	}
	if strings.TrimSpace(desc) == "" {
		// A model choosing among tools needs some words about each.
		desc = "Tool " + rt.Name + " of MCP server " + s.cfg.Name + "."
	}
	effect := contract.SideEffectExternal
	if s.cfg.TrustAnnotations && rt.Annotations != nil && rt.Annotations.ReadOnlyHint {
		effect = contract.SideEffectNone
	}
	capability := contract.CapabilityNetwork
	if s.cfg.Type == TypeStdio {
		capability = contract.CapabilityProcessExec
	}
	t := &Tool{
		desc: contract.Descriptor{
			Name:         name,
			Description:  desc,
			InputSchema:  schema,
			Capabilities: []contract.Capability{capability},
			SideEffect:   effect,
			Parallel:     effect == contract.SideEffectNone,
			Timeout:      s.callTimeout(),
			Binding:      contract.BindingMCP,
			Source:       sourceOf(s.cfg),
		},
		srv:    s,
		remote: rt.Name,
	}
	if rt.Annotations != nil {
		t.annotations = rt.Annotations
	}
	return t, nil
}

// sourceOf names where a server's tools come from: the config file and the
// server, "/repo/.mcp.json#github", or "host#github" for a host's server.
func sourceOf(cfg ServerConfig) string {
	file := cfg.File
	if file == "" {
		file = "host"
	}
	return file + "#" + cfg.Name
}

// serverSubject is the server as configured, for previews: its name, type,
// and command and args as written (placeholders unexpanded) or its URL
// without query, fragment or user info. Env and header values are left
// out: they are where credentials live.
func serverSubject(cfg ServerConfig) map[string]any {
	m := map[string]any{"name": cfg.Name, "type": cfg.Type}
	if cfg.Type == TypeStdio {
		m["command"] = append([]string{cfg.Command}, cfg.Args...)
	} else {
		m["url"] = redact.DisplayURL(cfg.URL)
	}
	return m
}

func serverSummary(subject map[string]any) string {
	if cmd, ok := subject["command"].([]string); ok {
		return strings.Join(cmd, " ")
	}
	u, _ := subject["url"].(string)
	return u
}
