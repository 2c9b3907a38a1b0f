//go:build unix

package approver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// rulesSchema is the version of the rules file format this package
// writes. It reads schema 1 too.
const rulesSchema = 2

// joinProblems joins problems into one error whose message has one line per
// problem; errors.As sees each of them.
func joinProblems(problems []*configfile.Error) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

const wantShape = `{"schema": 2, "rules": [{"tool": "NAME", "source": "builtin", "decision": "deny"}]}`

// ruleParser collects the problems of one file.
type ruleParser struct {
	data     []byte
	schema   int
	problems []*configfile.Error
}

func (p *ruleParser) add(off, index int, tool, problem string) {
	line, col := configfile.LineCol(p.data, off)
	p.problems = append(p.problems, ruleError("", line, col, index, tool, problem))
}

// parsedFile is what a rules file says.
type parsedFile struct {
	rules []Rule
	// operatorAllows is the system file's "allow_operator_allow_rules";
	// true when absent.
	operatorAllows bool
	// askReadOnly is "ask_read_only": true.
	askReadOnly bool
}

// parseRules reads a rules file:
//
//	{"schema": 2, "rules": [{"tool": NAME, "source"?: PATH|"builtin"|"*",
//	  "pattern"?: GLOB, "command"?: ["word", ["alt", "alt"], "*", ...],
//	  "decision": "allow"|"ask"|"deny", "reason"?: TEXT,
//	  "match"?: [EXAMPLE, ...], "not_match"?: [EXAMPLE, ...],
//	  "definition"?: {...}}]}
//
// and, in the system file (scope ScopeSystem), "allow_operator_allow_rules":
// true|false. Schema 1 files are read too: "allow": true|false in place of
// "decision", command words that are strings only, no examples.
//
// It is strict, and reports every problem of the file in file order, each
// naming the line and column, the rule's position and tool and the key,
// never quoting a value. A workspace's allow rule is one of them. Rules come
// back in file order, numbered, with scope.
func parseRules(data []byte, scope Scope) (parsedFile, []*configfile.Error) {
	system := scope == ScopeSystem
	p := &ruleParser{data: data}
	out := parsedFile{operatorAllows: true}
	doc, err := configfile.Parse(data)
	if err != nil {
		var syn *configfile.SyntaxError
		if errors.As(err, &syn) {
			if syn.Kind == configfile.SyntaxEmpty {
				p.problems = append(p.problems, fileError("the file is empty; write "+wantShape))
			} else {
				p.add(syn.Off, 0, "", syn.Error())
			}
		} else {
			p.problems = append(p.problems, fileError(err.Error()))
		}
		return out, p.problems
	}
	if doc.Kind() != "object" {
		p.add(doc.Off, 0, "", "the file must be a JSON object: "+wantShape)
		return out, p.problems
	}
	topKeys := `the file has only "schema", "rules" and "ask_read_only"`
	if system {
		topKeys = `the system file has only "schema", "rules", "ask_read_only" and "allow_operator_allow_rules"`
	}
	var schema, rules *configfile.Value
	members := doc.Members()
	for i, m := range members {
		if p.repeated(members[:i], m, 0, "") {
			continue
		}
		switch {
		case m.Key == "schema":
			schema = &members[i].Value
		case m.Key == "rules":
			rules = &members[i].Value
		case m.Key == "allow_operator_allow_rules" && system:
			switch string(m.Value.Raw) {
			case "true":
			case "false":
				out.operatorAllows = false
			default:
				p.add(m.Value.Off, 0, "", `"allow_operator_allow_rules" must be true or false`)
			}
		case m.Key == "ask_read_only":
			switch string(m.Value.Raw) {
			case "true":
				out.askReadOnly = true
			case "false":
			default:
				p.add(m.Value.Off, 0, "", `"ask_read_only" must be true or false`)
			}
		default:
			p.add(m.KeyOff, 0, "", "unknown key "+describeKey(m.Key)+"; "+topKeys)
		}
	}
	switch {
	case schema == nil:
		p.add(doc.Off, 0, "", fmt.Sprintf(`"schema" is missing; write "schema": %d, the version this basis writes`, rulesSchema))
	case string(schema.Raw) == "1" || string(schema.Raw) == "2":
		p.schema = int(schema.Raw[0] - '0')
	default:
		p.add(schema.Off, 0, "", fmt.Sprintf(`"schema" is not 1 or %d, the versions this basis reads (a file written by a newer basis needs that basis)`, rulesSchema))
	}
	switch {
	case rules == nil:
		p.add(doc.Off, 0, "", `"rules" is missing; write "rules": [] for a file with no rules`)
	case rules.Kind() != "array":
		p.add(rules.Off, 0, "", `"rules" must be a list of rule objects`)
	case p.schema != 0:
		for i, item := range rules.Elements() {
			r, ok := p.rule(item, i+1)
			if !ok {
				continue
			}
			if scope == ScopeWorkspace && r.Decision == RuleAllow {
				p.add(item.Off, i+1, r.Tool, workspaceAllowProblem)
				continue
			}
			r.Scope = scope
			out.rules = append(out.rules, r)
		}
	}
	if len(p.problems) > 0 {
		// In the order they appear in the file, as an editor walks them.
		slices.SortStableFunc(p.problems, func(a, b *configfile.Error) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
		})
		return out, p.problems
	}
	if out.rules == nil {
		out.rules = []Rule{}
	}
	return out, nil
}

// repeated reports, and records as a problem, a key that appeared before:
// JSON decoders disagree about which one wins, so a strict format refuses
// both.
func (p *ruleParser) repeated(before []configfile.Member, m configfile.Member, index int, tool string) bool {
	for _, b := range before {
		if b.Key == m.Key {
			p.add(m.KeyOff, index, tool, "key "+describeKey(m.Key)+" appears twice; keep one")
			return true
		}
	}
	return false
}

func (p *ruleParser) ruleKeys() string {
	if p.schema == 1 {
		return `a schema 1 rule has "tool", "source", "pattern", "command", "allow" and "reason"`
	}
	return `a rule has "tool", "source", "pattern", "command", "decision", "reason", "match", "not_match" and "definition"`
}

func (p *ruleParser) rule(item configfile.Value, index int) (Rule, bool) {
	var r Rule
	r.Number = index
	if item.Kind() != "object" {
		p.add(item.Off, index, "", `the rule is not a JSON object; write {"tool": "NAME", "source": "builtin", "decision": "deny"}`)
		return r, false
	}
	before := len(p.problems)
	members := item.Members()
	// The tool comes first so that every later message can name it.
	var toolSeen bool
	for _, m := range members {
		if m.Key != "tool" || toolSeen {
			continue
		}
		toolSeen = true
		text, ok := m.Value.Text()
		switch {
		case !ok:
			p.add(m.Value.Off, index, "", `"tool" must be a string`)
		case !contract.ValidName(text):
			p.add(m.Value.Off, index, "", `"tool" is not a valid tool name: use 1 to 64 of A-Z a-z 0-9 _ -`)
		default:
			r.Tool = text
		}
	}
	if !toolSeen {
		p.add(item.Off, index, "", `"tool" is missing`)
	}
	tool := r.Tool
	var decisionSeen bool
	var definitionAt int
	var examples [2][]configfile.Value // match, not_match
	for i, m := range members {
		if p.repeated(members[:i], m, index, tool) {
			continue
		}
		v := m.Value
		switch {
		case m.Key == "tool":
		case m.Key == "source":
			text, ok := v.Text()
			if !ok {
				p.add(v.Off, index, tool, `"source" must be a string`)
			} else if text == "" {
				p.add(v.Off, index, tool, `"source" is empty; name the manifest or MCP config that declared the tool, "builtin" for spawn, or "*" for any source`)
			} else if problem := sourceProblem(text); problem != "" {
				p.add(v.Off, index, tool, problem)
			} else {
				r.Source = text
			}
		case m.Key == "allow" && p.schema == 1:
			decisionSeen = true
			switch string(v.Raw) {
			case "true":
				r.Decision = RuleAllow
			case "false":
				r.Decision = RuleDeny
			default:
				p.add(v.Off, index, tool, `"allow" must be true or false`)
			}
		case m.Key == "decision" && p.schema == 2:
			decisionSeen = true
			text, _ := v.Text()
			if err := r.Decision.UnmarshalText([]byte(text)); err != nil || v.Kind() != "string" {
				p.add(v.Off, index, tool, `"decision" must be "allow", "ask" or "deny"`)
			}
		case m.Key == "pattern":
			text, ok := v.Text()
			switch {
			case !ok:
				p.add(v.Off, index, tool, `"pattern" must be a string`)
			case text == "":
				p.add(v.Off, index, tool, `"pattern" is empty; leave it out for a rule about every call of the tool`)
			default:
				r.Pattern = text
			}
		case m.Key == "command":
			words, problem := p.commandWords(v)
			if problem != "" {
				p.add(v.Off, index, tool, `"command" `+problem)
			} else {
				r.Command = words
			}
		case m.Key == "reason":
			text, ok := v.Text()
			if !ok {
				p.add(v.Off, index, tool, `"reason" must be a string`)
			} else {
				r.Reason = text
			}
		case (m.Key == "match" || m.Key == "not_match") && p.schema == 2:
			which := 0
			if m.Key == "not_match" {
				which = 1
			}
			list, ok := stringList(v)
			if !ok || len(list) == 0 {
				p.add(v.Off, index, tool, fmt.Sprintf("%q must be a non-empty list of strings: command lines for a command rule, subject JSON for a pattern rule", m.Key))
				continue
			}
			examples[which] = v.Elements()
			if which == 0 {
				r.Match = list
			} else {
				r.NotMatch = list
			}
		case m.Key == "definition" && p.schema == 2:
			def, err := canonicalDefinition(v.Raw)
			if err != nil || def == nil {
				p.add(v.Off, index, tool, `"definition" must be a JSON object: the definition of the tool the rule approved, as basis records it`)
				continue
			}
			r.Definition = def
			definitionAt = v.Off
		default:
			p.add(m.KeyOff, index, tool, "unknown key "+describeKey(m.Key)+"; "+p.ruleKeys())
		}
	}
	if r.Definition != nil && decisionSeen && r.Decision != RuleAllow {
		p.add(definitionAt, index, tool, definitionOnDenyProblem)
	}
	if !decisionSeen {
		if p.schema == 1 {
			p.add(item.Off, index, tool, `"allow" is missing; say true to allow or false to deny`)
		} else {
			p.add(item.Off, index, tool, `"decision" is missing; say "allow", "ask" or "deny"`)
		}
	}
	if r.Pattern != "" && len(r.Command) > 0 {
		p.add(item.Off, index, tool, `"pattern" and "command" are both set; a rule has at most one, so write two rules`)
	}
	if len(p.problems) == before {
		for _, ee := range r.exampleErrors() {
			off := item.Off
			if list := examples[ee.which()]; ee.Index-1 < len(list) {
				off = list[ee.Index-1].Off
			}
			p.add(off, index, tool, ee.Error())
		}
	}
	return r, len(p.problems) == before
}

// commandWords reads "command": a list whose items are words (strings) or,
// from schema 2, lists of alternative words.
func (p *ruleParser) commandWords(v configfile.Value) ([]CommandWord, string) {
	want := `must be a list of words, such as ["git", ["push", "fetch"], "*"]`
	if p.schema == 1 {
		want = `must be a list of strings, such as ["go", "test", "*"]`
	}
	if v.Kind() != "array" {
		return nil, want
	}
	elems := v.Elements()
	if len(elems) == 0 {
		return nil, "is empty; leave it out for a rule about every call of the tool"
	}
	words := make([]CommandWord, 0, len(elems))
	for _, e := range elems {
		if text, ok := e.Text(); ok {
			words = append(words, CommandWord{text})
			continue
		}
		alts, ok := stringList(e)
		if !ok || p.schema == 1 {
			return nil, want
		}
		if len(alts) == 0 {
			return nil, "has an empty list of alternatives; list at least one word"
		}
		words = append(words, alts)
	}
	if err := checkCommandWords(words); err != nil {
		return nil, err.Error()
	}
	return words, ""
}

func fileError(problem string) *configfile.Error {
	return &configfile.Error{Err: errors.New(problem)}
}

// fileRule is a rule as rules files hold it.
type fileRule struct {
	Tool     string        `json:"tool"`
	Source   string        `json:"source,omitempty"`
	Pattern  string        `json:"pattern,omitempty"`
	Command  []CommandWord `json:"command,omitempty"`
	Decision RuleDecision  `json:"decision"`
	Reason   string        `json:"reason,omitempty"`
	Match    []string      `json:"match,omitempty"`
	NotMatch []string      `json:"not_match,omitempty"`
	// Definition comes last: it is the longest.
	Definition json.RawMessage `json:"definition,omitempty"`
}

// formatRules encodes rules as a rules file of the current schema, one rule
// per line, that parseRules reads back. Scope, File and Number are not
// written. A rule that fails [Rule.Validate], or that matches an exact
// subject (which only a session may hold), is an error. askReadOnly is
// written as "ask_read_only": true.
func formatRules(rules []Rule, askReadOnly bool) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n  \"schema\": %d,\n", rulesSchema)
	if askReadOnly {
		buf.WriteString("  \"ask_read_only\": true,\n")
	}
	buf.WriteString("  \"rules\": [")
	for i, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, renumber(err, i+1, r.validTool())
		}
		if r.Subject != "" {
			return nil, ruleError("", 0, 0, i+1, r.Tool, "matches one exact subject, which only a session can remember; use a pattern")
		}
		def, err := canonicalDefinition(r.Definition)
		if err != nil {
			return nil, ruleError("", 0, 0, i+1, r.Tool, err.Error())
		}
		line, err := marshalNoEscape(fileRule{Tool: r.Tool, Source: r.Source, Pattern: r.Pattern, Command: r.Command, Decision: r.Decision, Reason: r.Reason, Match: r.Match, NotMatch: r.NotMatch, Definition: def})
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		buf.Write(line)
	}
	if len(rules) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	return buf.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
