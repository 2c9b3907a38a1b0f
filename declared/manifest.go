//go:build unix

package declared

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/childenv"
	"github.com/basis-go/basis/inputschema"
)

// maxTimeout is the longest timeout_ms a manifest may ask for.
const maxTimeout = 24 * time.Hour

// The keys the format defines, in the order messages list them.
var (
	manifestKeys = []string{"schema", "tools"}
	toolKeys     = []string{"description", "input_schema", "command", "cwd", "env", "side_effect", "timeout_ms", "network", "sandbox"}
)

// member and value are configfile's: a key or value and where it starts.
type (
	member = configfile.Member
	value  = configfile.Value
)

// parser reads one manifest, collecting every problem it finds. Problems
// carry positions but never quote the file's values.
type parser struct {
	*loader
	file     string
	data     []byte
	index    *lineIndex
	problems []error
	offsets  []int // of each problem, to list them in file order
	// workspace says the file is a repository's manifest: a tool's cwd
	// must then stay inside the root.
	workspace bool
	// unavailable holds what makes the tool being read unusable here but
	// leaves the file usable: ${VAR}s naming unset variables, and a cwd
	// that leads outside the workspace.
	unavailable []*configfile.Error
}

func newParser(l *loader, file string, data []byte) *parser {
	return &parser{loader: l, file: file, data: data, index: newLineIndex(data)}
}

// child is a parser for one tool body, sharing the file.
func (p *parser) child() *parser {
	return &parser{loader: p.loader, file: p.file, data: p.data, index: p.index, workspace: p.workspace}
}

// subjectOf is a problem's [configfile.Error.Subject]: the tool it is in,
// if any.
func subjectOf(tool string) string {
	if tool == "" {
		return ""
	}
	return "tool " + tool
}

// problemAt builds the *configfile.Error for a problem at byte offset off.
func (p *parser) problemAt(off int, tool, field string, err error) *configfile.Error {
	e := &configfile.Error{File: p.file, Subject: subjectOf(tool), Field: field, Err: err}
	if off >= 0 {
		e.Line, e.Column = p.index.pos(off)
	}
	return e
}

// report records one problem at byte offset off of the file.
func (p *parser) report(off int, tool, field string, err error) {
	p.problems = append(p.problems, p.problemAt(off, tool, field, err))
	p.offsets = append(p.offsets, off)
}

// sorted returns the problems in the order of the file.
func (p *parser) sorted() []error {
	idx := make([]int, len(p.problems))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return p.offsets[a] - p.offsets[b] })
	out := make([]error, len(idx))
	for i, j := range idx {
		out[i] = p.problems[j]
	}
	return out
}

// parse reads the whole manifest and returns its tools in name order, or
// the problems found. Reading goes on past a problem wherever the rest
// can still be understood, so one run reports them all.
func (p *parser) parse() ([]*Tool, []error) {
	doc, err := configfile.Parse(p.data)
	if err != nil {
		p.reportSyntax(err)
		return nil, p.sorted()
	}
	if doc.Kind() != "object" {
		p.report(doc.Off, "", "", newProblem(errWrongType,
			`a manifest is a JSON object such as {"schema": 1, "tools": {}}, not `+doc.KindPhrase()))
		return nil, p.sorted()
	}
	fields := p.members(doc, "", manifestKeys, "a manifest")
	version, ok := fields["schema"]
	switch {
	case !ok:
		p.report(doc.Off, "", "schema", newProblem(errMissingField, `missing; add "schema": 1`))
	case version.Value.Kind() != "number":
		p.report(version.Value.Off, "", "schema", newProblem(errWrongType, "must be the number 1, not "+version.Value.KindPhrase()))
	case string(version.Value.Raw) != "1":
		// A different version may mean a different format: reading on
		// would report its differences as mistakes.
		p.report(version.Value.Off, "", "schema", newProblem(errSchemaVersion,
			"this basis reads manifest schema 1 only; write 1, or use a basis that reads this version"))
		return nil, p.sorted()
	}
	toolsField, ok := fields["tools"]
	switch {
	case !ok:
		p.report(doc.Off, "", "tools", newProblem(errMissingField, `missing; add "tools": an object of tools by name`))
	case toolsField.Value.Kind() != "object":
		p.report(toolsField.Value.Off, "", "tools", newProblem(errWrongType, "must be an object of tools by name, not "+toolsField.Value.KindPhrase()))
	default:
		// Names are checked here, in file order; the bodies are read by
		// parseTools, concurrently when there are many.
		var bodies []member
		seen := make(map[string]bool)
		for _, m := range toolsField.Value.Members() {
			if !p.checkName(m) {
				// The body is still read, so its problems are reported
				// too; they are located by line and column.
				m.Key = ""
				bodies = append(bodies, m)
				continue
			}
			if seen[m.Key] {
				p.report(m.KeyOff, m.Key, "", newProblem(errDuplicateKey, "is declared twice in this file; a name is one tool"))
				continue
			}
			seen[m.Key] = true
			bodies = append(bodies, m)
		}
		tools := p.parseTools(bodies)
		if len(p.problems) == 0 {
			slices.SortFunc(tools, func(a, b *Tool) int { return strings.Compare(a.spec.Name, b.spec.Name) })
			return tools, nil
		}
	}
	return nil, p.sorted()
}

// reportSyntax reports why the file is not one JSON value, never quoting
// the text at fault.
func (p *parser) reportSyntax(err error) {
	var se *configfile.SyntaxError
	if !errors.As(err, &se) {
		p.report(0, "", "", newProblem(errSyntax, "not valid JSON"))
		return
	}
	text := se.Error()
	switch se.Kind {
	case configfile.SyntaxEmpty:
		text = `the file is empty; a manifest is an object such as {"schema": 1, "tools": {}}`
	case configfile.SyntaxTrailing:
		text = "there is more after the JSON object ends; a manifest is one object"
	}
	p.report(se.Off, "", "", newProblem(errSyntax, text))
}

// parallelFrom is the number of tools from which their bodies are read
// concurrently. Compiling a schema is most of the cost of loading, and
// tools are independent of each other.
const parallelFrom = 32

// parseTools reads the tool bodies and returns the tools that have no
// problem, in file order, with every problem recorded as if they had been
// read one after another.
func (p *parser) parseTools(bodies []member) []*Tool {
	tools := make([]*Tool, len(bodies))
	children := make([]*parser, len(bodies))
	read := func(i int) {
		children[i] = p.child()
		if bodies[i].Key == "" {
			children[i].parseTool(bodies[i]) // problems only
			return
		}
		tools[i] = children[i].parseTool(bodies[i])
	}
	if len(bodies) < parallelFrom {
		for i := range bodies {
			read(i)
		}
	} else {
		// Each worker takes the next body itself: handing bodies out over
		// a channel woke a worker's thread for every tool.
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(bodies) {
						return
					}
					read(i)
				}
			})
		}
		wg.Wait()
	}
	var out []*Tool
	for i, child := range children {
		p.problems = append(p.problems, child.problems...)
		p.offsets = append(p.offsets, child.offsets...)
		if tools[i] != nil {
			out = append(out, tools[i])
		}
	}
	return out
}

// members reads the members of an object, reporting duplicate and
// unknown keys, and returns the known ones by key.
func (p *parser) members(obj value, tool string, known []string, what string) map[string]member {
	out := make(map[string]member)
	for _, m := range obj.Members() {
		switch {
		case !slices.Contains(known, m.Key):
			field, text := unknownKey(m.Key, known, what)
			p.report(m.KeyOff, tool, field, newProblem(errUnknownKey, text))
		case hasMember(out, m.Key):
			p.report(m.KeyOff, tool, m.Key, newProblem(errDuplicateKey, "is written twice; write it once"))
		default:
			out[m.Key] = m
		}
	}
	return out
}

func hasMember(m map[string]member, key string) bool { _, ok := m[key]; return ok }

// checkName reports a tool name that is not valid or is reserved. An
// invalid name is not printed: it is located by line and column instead.
func (p *parser) checkName(m member) bool {
	if err := contract.CheckName(m.Key); err != nil {
		p.report(m.KeyOff, "", "", &problem{kind: contract.ErrInvalidName,
			text: "this tool name is not valid: " + nameFault(m.Key) + "; use 1 to 64 of A-Z a-z 0-9 _ -"})
		return false
	}
	if contract.IsMCPName(m.Key) {
		p.report(m.KeyOff, m.Key, "", newProblem(errReservedName,
			"names beginning with "+contract.MCPPrefix+" belong to tools bridged from MCP servers; choose another name"))
		return false
	}
	if contract.IsSpawnName(m.Key) || p.reserved[strings.ToLower(m.Key)] {
		p.report(m.KeyOff, m.Key, "", newProblem(errReservedName, "this name is taken by a tool basis provides; choose another name"))
		return false
	}
	return true
}

// nameFault says what is wrong with an invalid name without quoting it.
func nameFault(name string) string {
	if name == "" {
		return "it is empty"
	}
	if len(name) > contract.MaxNameLen {
		return strconv.Itoa(len(name)) + " bytes is too long"
	}
	for i := 0; i < len(name); i++ {
		if !(nameByte(name[i]) || name[i] == '-') {
			return "character " + strconv.Itoa(i+1) + " is not allowed"
		}
	}
	return "it breaks the naming rules"
}

// parseTool reads one tool. It returns nil when the tool has a problem,
// having reported every problem it found. A tool whose only problem is a
// ${VAR} naming an unset variable is returned, unavailable: it is listed,
// and refuses its calls naming the variable, while every other tool works.
func (p *parser) parseTool(m member) *Tool {
	name := m.Key
	if m.Value.Kind() != "object" {
		p.report(m.Value.Off, name, "", newProblem(errWrongType,
			"a tool is an object with description, input_schema and command, not "+m.Value.KindPhrase()))
		return nil
	}
	before := len(p.problems)
	p.unavailable = nil
	fields := p.members(m.Value, name, toolKeys, "a tool")
	spec := &Spec{Name: name, Root: p.root, Source: p.file, SideEffect: contract.SideEffectProcess, Timeout: DefaultTimeout}
	run := &resolved{}
	state := &toolState{programAt: p.problemAt(m.KeyOff, name, "command", nil)}

	missing := func(field, what string) {
		p.report(m.KeyOff, name, field, newProblem(errMissingField, "missing; "+what))
	}
	if f, ok := fields["description"]; !ok {
		missing("description", "say what the tool does and when to use it: the model reads it")
	} else if s, ok := p.str(f.Value, name, "description"); ok {
		if strings.TrimSpace(s) == "" {
			p.report(f.Value.Off, name, "description", newProblem(errMissingField,
				"is empty; say what the tool does and when to use it: the model reads it"))
		}
		spec.Description = s
	}

	var schema *inputschema.Schema
	if f, ok := fields["input_schema"]; !ok {
		missing("input_schema", `give the JSON Schema of the object the program reads, such as {"type": "object", "properties": {}}`)
	} else {
		off := f.Value.Off
		// Where each problem is, as the load reports it: a schema found
		// bad at its first use is reported in the same words.
		problems := func(ce *inputschema.CompileError) []*configfile.Error {
			var out []*configfile.Error
			for _, sp := range ce.Problems {
				kind := errInvalidSchema
				if errors.Is(sp.Err, inputschema.ErrNotObject) {
					kind = errWrongType
				}
				out = append(out, p.problemAt(off, name, "input_schema"+sp.Pointer, &problem{kind: kind, cause: sp.Err, text: sp.Err.Error()}))
			}
			return out
		}
		schema = inputschema.Defer(f.Value.Raw, &inputschema.DeferOptions{Invalid: func(ce *inputschema.CompileError) error {
			return invalidSchema(name, problems(ce))
		}})
		if !p.deferSchemas {
			p.reportSchema(schema, off, name)
		}
		spec.InputSchema = compact(f.Value.Raw)
	}

	if f, ok := fields["command"]; !ok {
		missing("command", `give the program and its arguments as an array, such as ["./.basis/tools/x", "run"]`)
	} else {
		spec.Command, run.argv = p.command(f.Value, name, state)
	}

	if f, ok := fields["cwd"]; ok {
		if s, ok := p.str(f.Value, name, "cwd"); ok {
			switch {
			case strings.TrimSpace(s) == "":
				p.report(f.Value.Off, name, "cwd", newProblem(errInvalidValue, "is empty; leave it out to run in the workspace root"))
			default:
				spec.Cwd = s
				state.cwdAt = p.problemAt(f.Value.Off, name, "cwd", nil)
				var ok bool
				if run.dir, ok = p.expandField(f.Value.Off, name, "cwd", s); ok && p.workspace {
					// Checked again at every call: a program can plant a
					// link in the workspace after this.
					if _, err := configfile.WithinRoot(p.root, run.dir); errors.Is(err, configfile.ErrOutsideRoot) {
						p.unavailable = append(p.unavailable, p.problemAt(f.Value.Off, name, "cwd", outsideWorkspace(err)))
					}
				}
			}
		}
	}

	var manifestEnv []string
	if f, ok := fields["env"]; ok {
		spec.EnvNames, manifestEnv = p.env(f.Value, name)
		state.envDigests = envDigests(f.Value, spec.EnvNames)
	}

	effectOK := true
	if f, ok := fields["side_effect"]; ok {
		effectOK = false
		if s, ok := p.str(f.Value, name, "side_effect"); ok {
			switch s {
			case "process":
				spec.SideEffect, effectOK = contract.SideEffectProcess, true
			case "external":
				spec.SideEffect, effectOK = contract.SideEffectExternal, true
			case "none", "local_state":
				p.report(f.Value.Off, name, "side_effect", newProblem(errInvalidValue,
					"a declared tool runs a program, so it cannot declare a weaker side effect; use process or external"))
			default:
				p.report(f.Value.Off, name, "side_effect", newProblem(errInvalidValue, "must be process or external"))
			}
		}
	}

	if f, ok := fields["network"]; ok {
		switch string(f.Value.Raw) {
		case "true":
			spec.Network = true
			if effectOK && spec.SideEffect != contract.SideEffectExternal {
				// Reaching the network is acting on the world outside
				// this machine: the tool must say so where the gate
				// reads it.
				p.report(f.Value.Off, name, "network", newProblem(errInvalidValue,
					`true is allowed only with "side_effect": "external"; add it, or leave network out`))
			}
		case "false":
		default:
			p.report(f.Value.Off, name, "network", newProblem(errWrongType, "must be true or false, not "+f.Value.KindPhrase()))
		}
	}

	if f, ok := fields["sandbox"]; ok {
		if s, ok := p.str(f.Value, name, "sandbox"); ok {
			switch {
			case s != readOnlySandbox:
				p.report(f.Value.Off, name, "sandbox", newProblem(errInvalidValue,
					`must be "read-only", or left out for the sandbox the operator gives every tool`))
			case spec.Network:
				p.report(f.Value.Off, name, "sandbox", newProblem(errInvalidValue,
					`"read-only" has no network; leave "network" out, or leave sandbox out`))
			case effectOK && spec.SideEffect == contract.SideEffectExternal:
				p.report(f.Value.Off, name, "sandbox", newProblem(errInvalidValue,
					`"read-only" cannot act outside this machine; leave "side_effect" out, or leave sandbox out`))
			default:
				spec.ReadOnly = true
			}
		}
	}

	if f, ok := fields["timeout_ms"]; ok {
		spec.Timeout = p.timeout(f.Value, name)
		state.timeoutSet = true
	}

	if len(p.problems) > before {
		if p.deferSchemas && schema != nil {
			// The tool is not loaded anyway: its schema's problems are
			// listed with the others, as without DeferSchemas.
			p.reportSchema(schema, fields["input_schema"].Value.Off, name)
		}
		return nil
	}
	state.workspace = p.workspace
	if len(p.unavailable) > 0 {
		state.unavailable = &UnavailableError{Tool: name, Source: p.file, Problems: p.unavailable}
		run = &resolved{}
	} else if len(manifestEnv) > 0 {
		run.env = p.withEnv(manifestEnv)
	} else {
		run.env = p.baseEnv // shared and never modified: subprocess copies it
	}
	spec.run = seal(run)
	state.sandbox = p.sandbox
	if spec.ReadOnly && p.readOnlySandbox != nil {
		state.sandbox, state.readOnly = p.readOnlySandbox, true
	}
	state.realRoot = p.realRoot
	t := newTool(spec, schema, state)
	if t.readOnlyHere() {
		t.desc.SideEffect = contract.SideEffectNone
	}
	return t
}

// reportSchema compiles schema, written at offset off for tool name, and
// reports each of its problems.
func (p *parser) reportSchema(schema *inputschema.Schema, off int, name string) {
	var ie *invalidSchemaError
	if errors.As(schema.Err(), &ie) {
		for _, e := range ie.problems {
			p.report(off, name, e.Field, e.Err)
		}
	}
}

// str decodes a string value, reporting any other kind.
func (p *parser) str(v value, tool, field string) (string, bool) {
	s, ok := v.Text()
	if !ok {
		p.report(v.Off, tool, field, newProblem(errWrongType, "must be a string, not "+v.KindPhrase()))
		return "", false
	}
	if strings.IndexByte(s, 0) >= 0 {
		p.report(v.Off, tool, field, newProblem(errInvalidValue, "contains a NUL character, which no program can receive"))
		return "", false
	}
	return s, true
}

// command reads the argv: as written, and expanded. It notes where the
// program is written, and warns of every argument that puts a
// credential-looking variable on the command line.
func (p *parser) command(v value, tool string, state *toolState) (written, expanded []string) {
	if v.Kind() != "array" {
		p.report(v.Off, tool, "command", newProblem(errWrongType,
			`must be an array: the program and its arguments, such as ["./.basis/tools/x", "run"], never one shell string`))
		return nil, nil
	}
	elems := v.Elements()
	if len(elems) == 0 {
		p.report(v.Off, tool, "command", newProblem(errInvalidCommand, "is empty; give at least the program to run"))
		return nil, nil
	}
	state.programAt = p.problemAt(elems[0].Off, tool, "command[0]", nil)
	written, expanded = make([]string, len(elems)), make([]string, len(elems))
	for i, e := range elems {
		field := "command[" + strconv.Itoa(i) + "]"
		s, ok := p.str(e, tool, field)
		if !ok {
			continue
		}
		written[i] = s
		if i == 0 && strings.TrimSpace(s) == "" {
			p.report(e.Off, tool, field, newProblem(errInvalidCommand, "the program is blank; give its path or name"))
			continue
		}
		for _, variable := range placeholderNames(s) {
			if credentialName(variable) {
				line, col := p.index.pos(e.Off)
				state.warnings = append(state.warnings, Warning{File: p.file, Line: line, Column: col, Tool: tool, Field: field, Variable: variable})
			}
		}
		v, ok := p.expandField(e.Off, tool, field, s)
		if ok && i == 0 && strings.TrimSpace(v) == "" {
			p.report(e.Off, tool, field, newProblem(errInvalidCommand, "the program is blank once its placeholders are expanded"))
		}
		expanded[i] = v
	}
	return written, expanded
}

// env reads the manifest's env: its names, and NAME=value entries with
// the values expanded.
func (p *parser) env(v value, tool string) (names, entries []string) {
	if v.Kind() != "object" {
		p.report(v.Off, tool, "env", newProblem(errWrongType, "must be an object of variable names and string values, not "+v.KindPhrase()))
		return nil, nil
	}
	seen := make(map[string]bool)
	for _, m := range v.Members() {
		if !validVarName(m.Key) {
			p.report(m.KeyOff, tool, "env", newProblem(errInvalidValue,
				"this name is not a variable name: use letters, digits and _, not starting with a digit"))
			continue
		}
		field := "env." + m.Key
		if seen[m.Key] {
			p.report(m.KeyOff, tool, field, newProblem(errDuplicateKey, "is set twice; set it once"))
			continue
		}
		seen[m.Key] = true
		if loaderVariable(m.Key) {
			p.report(m.KeyOff, tool, field, newProblem(errLoaderVariable,
				"sets a variable that makes the dynamic loader run other code inside the program, unseen by any preview; "+
					"a manifest may not set LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT or DYLD_*"))
			continue
		}
		s, ok := p.str(m.Value, tool, field)
		if !ok {
			continue
		}
		if v, ok := p.expandField(m.Value.Off, tool, field, s); ok {
			names = append(names, m.Key)
			entries = append(entries, m.Key+"="+v)
		}
	}
	slices.Sort(names)
	return names, entries
}

// loaderVariable reports whether name is one the dynamic loader reads to
// load code of its choosing into a program (glibc, musl and macOS dyld).
// Letter case is ignored: refusing ld_preload costs nothing.
func loaderVariable(name string) bool {
	upper := strings.ToUpper(name)
	switch upper {
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT":
		return true
	}
	return strings.HasPrefix(upper, "DYLD_")
}

// credentialName reports whether a variable's name says it holds a
// credential: the one list every part of basis uses
// (childenv.LooksLikeCredential: TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL or KEY, in any case).
func credentialName(name string) bool { return childenv.LooksLikeCredential(name) }

// timeout reads timeout_ms: a whole number of milliseconds, at least 1.
func (p *parser) timeout(v value, tool string) time.Duration {
	if v.Kind() != "number" {
		p.report(v.Off, tool, "timeout_ms", newProblem(errWrongType, "must be a number of milliseconds, not "+v.KindPhrase()))
		return 0
	}
	ms, err := strconv.ParseInt(string(v.Raw), 10, 64)
	switch {
	case err != nil && strings.ContainsAny(string(v.Raw), ".eE"):
		p.report(v.Off, tool, "timeout_ms", newProblem(errInvalidValue, "must be a whole number of milliseconds"))
	case err == nil && ms < 1:
		p.report(v.Off, tool, "timeout_ms", newProblem(errInvalidValue,
			"must be at least 1; leave it out for the default of "+strconv.Itoa(int(DefaultTimeout/time.Second))+" seconds"))
	case err != nil || time.Duration(ms) > maxTimeout/time.Millisecond:
		p.report(v.Off, tool, "timeout_ms", newProblem(errInvalidValue,
			"must be at most "+strconv.FormatInt(maxTimeout.Milliseconds(), 10)+" (24 hours)"))
	default:
		return time.Duration(ms) * time.Millisecond
	}
	return 0
}

// expandField expands the placeholders of one field, reporting problems
// by field and variable name. A variable that is not set is not a problem
// of the file: it is noted, and makes the tool unavailable.
func (p *parser) expandField(off int, tool, field, s string) (string, bool) {
	for _, name := range placeholderNames(s) {
		if childenv.IsBasisVariable(name) {
			// Expanded, it would hand the program what childenv keeps
			// from it: BASIS_SERVE_TOKEN answers basis's own questions.
			p.report(off, tool, field, newProblem(errInvalidValue,
				"${"+name+"} names one of basis's own variables (BASIS_*), which are never handed to a program basis starts; "+
					"write the value the program needs, or set it in a variable of another name"))
			return "", false
		}
	}
	v, err := expand(s, p.lookup)
	if err != nil {
		if errors.Is(err, configfile.ErrUnsetVariable) {
			p.unavailable = append(p.unavailable, p.problemAt(off, tool, field, err))
		} else {
			p.report(off, tool, field, err)
		}
		return "", false
	}
	if strings.IndexByte(v, 0) >= 0 {
		p.report(off, tool, field, newProblem(errInvalidValue, "contains a NUL character once expanded, which no program can receive"))
		return "", false
	}
	return v, true
}

// unknownKey describes a key the format does not define. The key is
// named only when it looks like a key (configfile.LooksLikeKey) and is
// either a near miss of a known one ("timout_ms") or a short word with no
// digits: that is when naming it helps. Anything else might be a value
// written in the wrong place — a token is a short run of letters and
// digits — so it is located by line and column instead.
func unknownKey(key string, known []string, what string) (field, text string) {
	allowed := what + " may have " + strings.Join(known, ", ")
	if configfile.LooksLikeKey(key) {
		if best := configfile.Suggest(key, known, 1); len(best) > 0 {
			return key, "unknown key; did you mean " + best[0] + "? (" + allowed + ")"
		}
		if len(key) <= 20 && !strings.ContainsAny(key, "0123456789") {
			return key, "unknown key (" + allowed + ")"
		}
	}
	return "", "unknown key (not shown: it may be a value written in the wrong place); " + allowed
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return slices.Clone(raw)
	}
	return b.Bytes()
}
