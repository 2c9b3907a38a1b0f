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
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
)

// maxTimeout is the longest timeout_ms a manifest may ask for.
const maxTimeout = 24 * time.Hour

// The keys the format defines, in the order messages list them.
var (
	manifestKeys = []string{"schema", "tools"}
	toolKeys     = []string{"description", "input_schema", "command", "cwd", "env", "side_effect", "timeout_ms"}
)

// parser reads one manifest, collecting every problem it finds. Problems
// carry positions but never quote the file's values.
type parser struct {
	*loader
	file     string
	data     []byte
	problems []error
	offsets  []int // of each problem, to list them in file order
}

// report records one problem at byte offset off of the file.
func (p *parser) report(off int, tool, field, variable string, err error) {
	e := &Error{File: p.file, Tool: tool, Field: field, Variable: variable, Err: err}
	if off >= 0 {
		e.Line, e.Column = lineCol(p.data, off)
	}
	p.problems = append(p.problems, e)
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
	doc, start, bad := checkDocument(p.data)
	if bad != nil {
		p.report(bad.off, "", "", "", bad.err)
		return nil, p.sorted()
	}
	if jsonKind(doc) != "object" {
		p.report(start, "", "", "", newProblem(ErrWrongType,
			`a manifest is a JSON object such as {"schema": 1, "tools": {}}, not `+article(jsonKind(doc))))
		return nil, p.sorted()
	}
	fields := p.members(doc, start, "", manifestKeys, "a manifest")
	version, ok := fields["schema"]
	switch {
	case !ok:
		p.report(start, "", "schema", "", newProblem(ErrMissingField, `missing; add "schema": 1`))
	case jsonKind(version.val) != "number":
		p.report(version.valOff, "", "schema", "", newProblem(ErrWrongType, "must be the number 1, not "+article(jsonKind(version.val))))
	case string(version.val) != "1":
		// A different version may mean a different format: reading on
		// would report its differences as mistakes.
		p.report(version.valOff, "", "schema", "", newProblem(ErrSchemaVersion,
			"this basis reads manifest schema 1 only; write 1, or use a basis that reads this version"))
		return nil, p.sorted()
	}
	toolsField, ok := fields["tools"]
	switch {
	case !ok:
		p.report(start, "", "tools", "", newProblem(ErrMissingField, `missing; add "tools": an object of tools by name`))
	case jsonKind(toolsField.val) != "object":
		p.report(toolsField.valOff, "", "tools", "", newProblem(ErrWrongType, "must be an object of tools by name, not "+article(jsonKind(toolsField.val))))
	default:
		// Names are checked here, in file order; the bodies are read by
		// parseTools, concurrently when there are many.
		var bodies []member
		seen := make(map[string]bool)
		for _, m := range objectMembers(toolsField.val, toolsField.valOff) {
			if !p.checkName(m) {
				// The body is still read, so its problems are reported
				// too; they are located by line and column.
				m.key = ""
				bodies = append(bodies, m)
				continue
			}
			if seen[m.key] {
				p.report(m.keyOff, m.key, "", "", newProblem(ErrDuplicateKey, "is declared twice in this file; a name is one tool"))
				continue
			}
			seen[m.key] = true
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
		children[i] = &parser{loader: p.loader, file: p.file, data: p.data}
		if bodies[i].key == "" {
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
		next := make(chan int)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					read(i)
				}
			}()
		}
		for i := range bodies {
			next <- i
		}
		close(next)
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
func (p *parser) members(raw json.RawMessage, base int, tool string, known []string, what string) map[string]member {
	out := make(map[string]member)
	for _, m := range objectMembers(raw, base) {
		switch {
		case !slices.Contains(known, m.key):
			field, text := unknownKey(m.key, known, what)
			p.report(m.keyOff, tool, field, "", newProblem(ErrUnknownKey, text))
		case hasMember(out, m.key):
			p.report(m.keyOff, tool, m.key, "", newProblem(ErrDuplicateKey, "is written twice; write it once"))
		default:
			out[m.key] = m
		}
	}
	return out
}

func hasMember(m map[string]member, key string) bool { _, ok := m[key]; return ok }

// checkName reports a tool name that is not valid or is reserved. An
// invalid name is not printed: it is located by line and column instead.
func (p *parser) checkName(m member) bool {
	if err := contract.CheckName(m.key); err != nil {
		p.report(m.keyOff, "", "", "", &problem{kind: contract.ErrInvalidName,
			text: "this tool name is not valid: " + nameFault(m.key) + "; use 1 to 64 of A-Z a-z 0-9 _ -"})
		return false
	}
	if contract.IsMCPName(m.key) {
		p.report(m.keyOff, m.key, "", "", newProblem(ErrReservedName,
			"names beginning with "+contract.MCPPrefix+" belong to tools bridged from MCP servers; choose another name"))
		return false
	}
	if p.reserved[m.key] {
		p.report(m.keyOff, m.key, "", "", newProblem(ErrReservedName, "this name is taken by a tool basis provides; choose another name"))
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
// having reported every problem it found.
func (p *parser) parseTool(m member) *Tool {
	name := m.key
	if jsonKind(m.val) != "object" {
		p.report(m.valOff, name, "", "", newProblem(ErrWrongType,
			"a tool is an object with description, input_schema and command, not "+article(jsonKind(m.val))))
		return nil
	}
	before := len(p.problems)
	fields := p.members(m.val, m.valOff, name, toolKeys, "a tool")
	spec := &Spec{Name: name, Root: p.root, Source: p.file, SideEffect: contract.SideEffectProcess, Timeout: DefaultTimeout}
	run := &resolved{}

	missing := func(field, what string) {
		p.report(m.keyOff, name, field, "", newProblem(ErrMissingField, "missing; "+what))
	}
	if f, ok := fields["description"]; !ok {
		missing("description", "say what the tool does and when to use it: the model reads it")
	} else if s, ok := p.str(f, name, "description"); ok {
		if strings.TrimSpace(s) == "" {
			p.report(f.valOff, name, "description", "", newProblem(ErrMissingField,
				"is empty; say what the tool does and when to use it: the model reads it"))
		}
		spec.Description = s
	}

	var schema *inputschema.Schema
	if f, ok := fields["input_schema"]; !ok {
		missing("input_schema", `give the JSON Schema of the object the program reads, such as {"type": "object", "properties": {}}`)
	} else {
		var err error
		schema, err = inputschema.Compile(f.val)
		var ce *inputschema.CompileError
		if errors.As(err, &ce) {
			for _, sp := range ce.Problems {
				kind := ErrInvalidSchema
				if errors.Is(sp.Err, inputschema.ErrNotObject) {
					kind = ErrWrongType
				}
				p.report(f.valOff, name, "input_schema"+sp.Pointer, "", &problem{kind: kind, cause: sp.Err, text: sp.Err.Error()})
			}
		}
		spec.InputSchema = compact(f.val)
	}

	if f, ok := fields["command"]; !ok {
		missing("command", `give the program and its arguments as an array, such as ["./.basis/tools/x", "run"]`)
	} else {
		spec.Command, run.argv = p.command(f, name)
	}

	if f, ok := fields["cwd"]; ok {
		if s, ok := p.str(f, name, "cwd"); ok {
			switch {
			case strings.TrimSpace(s) == "":
				p.report(f.valOff, name, "cwd", "", newProblem(ErrInvalidValue, "is empty; leave it out to run in the workspace root"))
			default:
				spec.Cwd = s
				run.dir, _ = p.expandField(f.valOff, name, "cwd", s)
			}
		}
	}

	var manifestEnv []string
	if f, ok := fields["env"]; ok {
		spec.EnvNames, manifestEnv = p.env(f, name)
	}

	if f, ok := fields["side_effect"]; ok {
		if s, ok := p.str(f, name, "side_effect"); ok {
			switch s {
			case "process":
				spec.SideEffect = contract.SideEffectProcess
			case "external":
				spec.SideEffect = contract.SideEffectExternal
			case "none", "local_state":
				p.report(f.valOff, name, "side_effect", "", newProblem(ErrInvalidValue,
					"a declared tool runs a program, so it cannot declare a weaker side effect; use process or external"))
			default:
				p.report(f.valOff, name, "side_effect", "", newProblem(ErrInvalidValue, "must be process or external"))
			}
		}
	}

	if f, ok := fields["timeout_ms"]; ok {
		spec.Timeout = p.timeout(f, name)
	}

	if len(p.problems) > before {
		return nil
	}
	if len(manifestEnv) > 0 {
		run.env = p.withEnv(manifestEnv)
	} else {
		run.env = p.baseEnv // shared and never modified: subprocess copies it
	}
	spec.run = seal(run)
	return newTool(spec, schema)
}

// str decodes a string field, reporting any other kind of value.
func (p *parser) str(f member, tool, field string) (string, bool) {
	if jsonKind(f.val) != "string" {
		p.report(f.valOff, tool, field, "", newProblem(ErrWrongType, "must be a string, not "+article(jsonKind(f.val))))
		return "", false
	}
	s := decodeString(f.val)
	if strings.IndexByte(s, 0) >= 0 {
		p.report(f.valOff, tool, field, "", newProblem(ErrInvalidValue, "contains a NUL character, which no program can receive"))
		return "", false
	}
	return s, true
}

// command reads the argv: as written, and expanded.
func (p *parser) command(f member, tool string) (written, expanded []string) {
	if jsonKind(f.val) != "array" {
		p.report(f.valOff, tool, "command", "", newProblem(ErrWrongType,
			`must be an array: the program and its arguments, such as ["./.basis/tools/x", "run"], never one shell string`))
		return nil, nil
	}
	elems := arrayElements(f.val, f.valOff)
	if len(elems) == 0 {
		p.report(f.valOff, tool, "command", "", newProblem(ErrInvalidCommand, "is empty; give at least the program to run"))
		return nil, nil
	}
	written, expanded = make([]string, len(elems)), make([]string, len(elems))
	for i, e := range elems {
		field := "command[" + strconv.Itoa(i) + "]"
		s, ok := p.str(member{val: e.val, valOff: e.off}, tool, field)
		if !ok {
			continue
		}
		written[i] = s
		if i == 0 && strings.TrimSpace(s) == "" {
			p.report(e.off, tool, field, "", newProblem(ErrInvalidCommand, "the program is blank; give its path or name"))
			continue
		}
		v, ok := p.expandField(e.off, tool, field, s)
		if ok && i == 0 && strings.TrimSpace(v) == "" {
			p.report(e.off, tool, field, "", newProblem(ErrInvalidCommand, "the program is blank once its placeholders are expanded"))
		}
		expanded[i] = v
	}
	return written, expanded
}

// env reads the manifest's env: its names, and NAME=value entries with
// the values expanded.
func (p *parser) env(f member, tool string) (names, entries []string) {
	if jsonKind(f.val) != "object" {
		p.report(f.valOff, tool, "env", "", newProblem(ErrWrongType, "must be an object of variable names and string values, not "+article(jsonKind(f.val))))
		return nil, nil
	}
	seen := make(map[string]bool)
	for _, m := range objectMembers(f.val, f.valOff) {
		if !validVarName(m.key) {
			p.report(m.keyOff, tool, "env", "", newProblem(ErrInvalidValue,
				"this name is not a variable name: use letters, digits and _, not starting with a digit"))
			continue
		}
		field := "env." + m.key
		if seen[m.key] {
			p.report(m.keyOff, tool, field, "", newProblem(ErrDuplicateKey, "is set twice; set it once"))
			continue
		}
		seen[m.key] = true
		s, ok := p.str(member{val: m.val, valOff: m.valOff}, tool, field)
		if !ok {
			continue
		}
		if v, ok := p.expandField(m.valOff, tool, field, s); ok {
			names = append(names, m.key)
			entries = append(entries, m.key+"="+v)
		}
	}
	slices.Sort(names)
	return names, entries
}

// timeout reads timeout_ms: a whole number of milliseconds, at least 1.
func (p *parser) timeout(f member, tool string) time.Duration {
	if jsonKind(f.val) != "number" {
		p.report(f.valOff, tool, "timeout_ms", "", newProblem(ErrWrongType, "must be a number of milliseconds, not "+article(jsonKind(f.val))))
		return 0
	}
	ms, err := strconv.ParseInt(string(f.val), 10, 64)
	switch {
	case err != nil && strings.ContainsAny(string(f.val), ".eE"):
		p.report(f.valOff, tool, "timeout_ms", "", newProblem(ErrInvalidValue, "must be a whole number of milliseconds"))
	case err == nil && ms < 1:
		p.report(f.valOff, tool, "timeout_ms", "", newProblem(ErrInvalidValue,
			"must be at least 1; leave it out for the default of "+strconv.Itoa(int(DefaultTimeout/time.Second))+" seconds"))
	case err != nil || time.Duration(ms) > maxTimeout/time.Millisecond:
		p.report(f.valOff, tool, "timeout_ms", "", newProblem(ErrInvalidValue,
			"must be at most "+strconv.FormatInt(maxTimeout.Milliseconds(), 10)+" (24 hours)"))
	default:
		return time.Duration(ms) * time.Millisecond
	}
	return 0
}

// expandField expands the placeholders of one field, reporting problems
// by field and variable name.
func (p *parser) expandField(off int, tool, field, s string) (string, bool) {
	v, err := expand(s, p.lookup)
	if err != nil {
		var xe *expandError
		variable := ""
		if errors.As(err, &xe) {
			variable = xe.variable
			err = xe.err
		}
		p.report(off, tool, field, variable, err)
		return "", false
	}
	if strings.IndexByte(v, 0) >= 0 {
		p.report(off, tool, field, "", newProblem(ErrInvalidValue, "contains a NUL character once expanded, which no program can receive"))
		return "", false
	}
	return v, true
}

// unknownKey describes a key the format does not define. The key is
// named only when it is a near miss of a known one ("timout_ms"): that is
// when naming it helps, and a near miss of a known word is no secret. Any
// other key might be a value written in the wrong place, so it is located
// by line and column instead.
func unknownKey(key string, known []string, what string) (field, text string) {
	allowed := what + " may have " + strings.Join(known, ", ")
	if len(key) <= 64 {
		if best := contract.ClosestNames(key, known, 1); len(best) > 0 && validVarName(key) {
			return key, "unknown key; did you mean " + best[0] + "? (" + allowed + ")"
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
