package approver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/configfile"
)

// RulesSchema is the version of the rules file format this package reads
// and writes.
const RulesSchema = 1

// ParseRules reads a rules file:
//
//	{"schema": 1, "rules": [{"tool": NAME, "source"?: PATH|"builtin"|"*",
//	  "pattern"?: GLOB, "command"?: ["word", "*", ...], "allow": true|false,
//	  "reason"?: TEXT}]}
//
// It is strict: a missing or unknown schema version, a missing "rules" list,
// an unknown or repeated key anywhere, a missing "tool" or "allow", a value
// of the wrong type, an invalid tool name or source, an empty pattern,
// command or command word, and a rule with both "pattern" and "command" are
// errors. Every problem in the file is reported, not only the first: the
// error joins one *[RulesError] per problem (errors.As finds the first),
// each wrapping [ErrInvalidRules] and naming the line and column (in
// characters), the rule's position and tool and the key; no value from the
// file is quoted, and an unknown key only when it looks like a key. A rule
// without "source" is bound to nothing (see [Rule.Source]). Rules come back
// in file order, numbered, with Scope [ScopeOperator]; loaders set the
// scope and the file.
func ParseRules(data []byte) ([]Rule, error) {
	rules, problems := parseRules(data)
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	return rules, nil
}

// joinProblems joins problems into one error whose message has one line per
// problem; errors.As and errors.Is see each of them.
func joinProblems(problems []*RulesError) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

const wantShape = `{"schema": 1, "rules": [{"tool": "NAME", "source": "builtin", "allow": false}]}`

// ruleParser collects the problems of one file.
type ruleParser struct {
	data     []byte
	problems []*RulesError
}

func (p *ruleParser) add(off, index int, tool, problem string) {
	line, col := configfile.LineCol(p.data, off)
	p.problems = append(p.problems, &RulesError{Line: line, Col: col, Index: index, Tool: tool, Problem: problem, Err: ErrInvalidRules})
}

func parseRules(data []byte) ([]Rule, []*RulesError) {
	p := &ruleParser{data: data}
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
		return nil, p.problems
	}
	if doc.Kind() != "object" {
		p.add(doc.Off, 0, "", "the file must be a JSON object: "+wantShape)
		return nil, p.problems
	}
	var schema, rules *configfile.Value
	members := doc.Members()
	for i, m := range members {
		if p.repeated(members[:i], m, 0, "") {
			continue
		}
		switch m.Key {
		case "schema":
			schema = &members[i].Value
		case "rules":
			rules = &members[i].Value
		default:
			p.add(m.KeyOff, 0, "", "unknown key "+describeKey(m.Key)+`; the file has only "schema" and "rules"`)
		}
	}
	switch {
	case schema == nil:
		p.add(doc.Off, 0, "", fmt.Sprintf(`"schema" is missing; write "schema": %d, the version this basis reads`, RulesSchema))
	case string(schema.Raw) != strconv.Itoa(RulesSchema):
		p.add(schema.Off, 0, "", fmt.Sprintf(`"schema" is not %d, the only version this basis reads (a file written by a newer basis needs that basis)`, RulesSchema))
	}
	var out []Rule
	switch {
	case rules == nil:
		p.add(doc.Off, 0, "", `"rules" is missing; write "rules": [] for a file with no rules`)
	case rules.Kind() != "array":
		p.add(rules.Off, 0, "", `"rules" must be a list of rule objects`)
	default:
		for i, item := range rules.Elements() {
			if r, ok := p.rule(item, i+1); ok {
				out = append(out, r)
			}
		}
	}
	if len(p.problems) > 0 {
		// In the order they appear in the file, as an editor walks them.
		slices.SortStableFunc(p.problems, func(a, b *RulesError) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
		})
		return nil, p.problems
	}
	if out == nil {
		out = []Rule{}
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

func (p *ruleParser) rule(item configfile.Value, index int) (Rule, bool) {
	var r Rule
	r.Number = index
	if item.Kind() != "object" {
		p.add(item.Off, index, "", `the rule is not a JSON object; write {"tool": "NAME", "source": "builtin", "allow": false}`)
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
	var allowSeen bool
	for i, m := range members {
		if p.repeated(members[:i], m, index, tool) {
			continue
		}
		v := m.Value
		switch m.Key {
		case "tool":
		case "source":
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
		case "allow":
			allowSeen = true
			switch string(v.Raw) {
			case "true":
				r.Allow = true
			case "false":
			default:
				p.add(v.Off, index, tool, `"allow" must be true or false`)
			}
		case "pattern":
			text, ok := v.Text()
			switch {
			case !ok:
				p.add(v.Off, index, tool, `"pattern" must be a string`)
			case text == "":
				p.add(v.Off, index, tool, `"pattern" is empty; leave it out for a rule about every call of the tool`)
			default:
				r.Pattern = text
			}
		case "command":
			words, ok := stringList(v)
			switch {
			case !ok:
				p.add(v.Off, index, tool, `"command" must be a list of strings, such as ["go", "test", "*"]`)
			case len(words) == 0:
				p.add(v.Off, index, tool, `"command" is empty; leave it out for a rule about every call of the tool`)
			default:
				if err := checkCommandWords(words); err != nil {
					p.add(v.Off, index, tool, `"command" `+err.Error())
				} else {
					r.Command = words
				}
			}
		case "reason":
			text, ok := v.Text()
			if !ok {
				p.add(v.Off, index, tool, `"reason" must be a string`)
			} else {
				r.Reason = text
			}
		default:
			p.add(m.KeyOff, index, tool, "unknown key "+describeKey(m.Key)+`; a rule has "tool", "source", "pattern", "command", "allow" and "reason"`)
		}
	}
	if !allowSeen {
		p.add(item.Off, index, tool, `"allow" is missing; say true to allow or false to deny`)
	}
	if r.Pattern != "" && len(r.Command) > 0 {
		p.add(item.Off, index, tool, `"pattern" and "command" are both set; a rule has at most one, so write two rules`)
	}
	return r, len(p.problems) == before
}

func fileError(problem string) *RulesError {
	return &RulesError{Problem: problem, Err: ErrInvalidRules}
}

// fileRule is a rule as rules files hold it.
type fileRule struct {
	Tool    string   `json:"tool"`
	Source  string   `json:"source,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
	Command []string `json:"command,omitempty"`
	Allow   bool     `json:"allow"`
	Reason  string   `json:"reason,omitempty"`
}

// FormatRules encodes rules as a rules file, one rule per line, that
// [ParseRules] reads back. Scope is not written. A rule that fails
// [Rule.Validate], or that matches an exact subject (which only a session
// may hold), is an error.
func FormatRules(rules []Rule) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n  \"schema\": %d,\n  \"rules\": [", RulesSchema)
	for i, r := range rules {
		if err := r.Validate(); err != nil {
			err.(*RulesError).Index = i + 1
			return nil, err
		}
		if r.Subject != "" {
			return nil, &RulesError{Index: i + 1, Tool: r.Tool, Problem: "matches one exact subject, which only a session can remember; use a pattern", Err: ErrInvalidRules}
		}
		line, err := marshalNoEscape(fileRule{Tool: r.Tool, Source: r.Source, Pattern: r.Pattern, Command: r.Command, Allow: r.Allow, Reason: r.Reason})
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
