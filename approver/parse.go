package approver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/basis-go/basis/contract"
)

// RulesSchema is the version of the rules file format this package reads
// and writes.
const RulesSchema = 1

// ParseRules reads a rules file:
//
//	{"schema": 1, "rules": [{"tool": NAME, "pattern"?: GLOB,
//	  "command"?: ["word", "*", ...], "allow": true|false, "reason"?: TEXT}]}
//
// It is strict: a missing or unknown schema version, a missing "rules" list,
// an unknown or repeated key anywhere, a missing "tool" or "allow", a value
// of the wrong type, an invalid tool name, an empty pattern, command or
// command word, and a rule with both "pattern" and "command" are errors.
// Errors are *[RulesError] values wrapping [ErrInvalidRules]; they name the
// rule's position and tool and the key, and quote no value. Rules come back
// in file order with Scope [ScopeOperator]; loaders set the scope.
func ParseRules(data []byte) ([]Rule, error) {
	top, err := parseTop(data)
	if err != nil {
		return nil, err
	}
	fields, problem := objectFields(top)
	if problem != "" {
		return nil, fileError("the file must be a JSON object: " + wantShape)
	}
	var schemaRaw, rulesRaw json.RawMessage
	for _, f := range fields {
		switch f.key {
		case "schema":
			schemaRaw = f.value
		case "rules":
			rulesRaw = f.value
		default:
			return nil, fileError(fmt.Sprintf("unknown key %s; the file has only \"schema\" and \"rules\"", quoteKey(f.key)))
		}
	}
	if problem := fieldsProblem(fields); problem != "" {
		return nil, fileError(problem)
	}
	if schemaRaw == nil {
		return nil, fileError(fmt.Sprintf("\"schema\" is missing; write \"schema\": %d, the version this basis reads", RulesSchema))
	}
	if v, err := strconv.Atoi(string(schemaRaw)); err != nil || v != RulesSchema {
		return nil, fileError(fmt.Sprintf("\"schema\" is not %d, the only version this basis reads (a file written by a newer basis needs that basis)", RulesSchema))
	}
	if rulesRaw == nil {
		return nil, fileError(`"rules" is missing; write "rules": [] for a file with no rules`)
	}
	var items []json.RawMessage
	if isNull(rulesRaw) || json.Unmarshal(rulesRaw, &items) != nil {
		return nil, fileError(`"rules" must be a list of rule objects`)
	}
	rules := make([]Rule, 0, len(items))
	for i, item := range items {
		r, err := parseRule(item)
		if err != nil {
			err.Index = i + 1
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

const wantShape = `{"schema": 1, "rules": [{"tool": "NAME", "allow": false}]}`

// parseTop checks that data is exactly one JSON value and returns it. A
// syntax error is reported by line and column, never by the offending text.
func parseTop(data []byte) (json.RawMessage, *RulesError) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var top json.RawMessage
	if err := dec.Decode(&top); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fileError("the file is empty; write " + wantShape)
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col := lineColumn(data, syn.Offset)
			return nil, fileError(fmt.Sprintf("not valid JSON at line %d, column %d", line, col))
		}
		// io.ErrUnexpectedEOF and the like: the text stops inside a value.
		return nil, fileError("not valid JSON: the file ends inside a value")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := lineColumn(data, dec.InputOffset())
		return nil, fileError(fmt.Sprintf("unexpected text after the JSON object at line %d, column %d", line, col))
	}
	return top, nil
}

// lineColumn turns a byte offset into a 1-based line and column.
func lineColumn(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

func parseRule(raw json.RawMessage) (Rule, *RulesError) {
	var r Rule
	fields, problem := objectFields(raw)
	if problem != "" {
		return r, &RulesError{Problem: "the rule is not a JSON object; write {\"tool\": \"NAME\", \"allow\": false}", Err: ErrInvalidRules}
	}
	// The tool comes first so that every later message can name it.
	var toolRaw, allowRaw json.RawMessage
	for _, f := range fields {
		if f.key == "tool" {
			toolRaw = f.value
		}
	}
	fail := func(problem string) (Rule, *RulesError) {
		return Rule{}, &RulesError{Tool: r.validTool(), Problem: problem, Err: ErrInvalidRules}
	}
	if toolRaw == nil {
		return fail(`"tool" is missing`)
	}
	if !decodeString(toolRaw, &r.Tool) {
		return fail(`"tool" must be a string`)
	}
	if !contract.ValidName(r.Tool) {
		return fail(`"tool" is not a valid tool name: use 1 to 64 of A-Z a-z 0-9 _ -`)
	}
	if problem := fieldsProblem(fields); problem != "" {
		return fail(problem)
	}
	for _, f := range fields {
		switch f.key {
		case "tool":
		case "allow":
			allowRaw = f.value
			if isNull(f.value) || json.Unmarshal(f.value, &r.Allow) != nil {
				return fail(`"allow" must be true or false`)
			}
		case "pattern":
			if !decodeString(f.value, &r.Pattern) {
				return fail(`"pattern" must be a string`)
			}
			if r.Pattern == "" {
				return fail(`"pattern" is empty; leave it out for a rule about every call of the tool`)
			}
		case "command":
			if isNull(f.value) || json.Unmarshal(f.value, &r.Command) != nil {
				return fail(`"command" must be a list of strings, such as ["go", "test", "*"]`)
			}
			if len(r.Command) == 0 {
				return fail(`"command" is empty; leave it out for a rule about every call of the tool`)
			}
		case "reason":
			if !decodeString(f.value, &r.Reason) {
				return fail(`"reason" must be a string`)
			}
		default:
			return fail(fmt.Sprintf("unknown key %s; a rule has \"tool\", \"pattern\", \"command\", \"allow\" and \"reason\"", quoteKey(f.key)))
		}
	}
	if allowRaw == nil {
		return fail(`"allow" is missing; say true to allow or false to deny`)
	}
	if r.Pattern != "" && len(r.Command) > 0 {
		return fail(`"pattern" and "command" are both set; a rule has at most one, so write two rules`)
	}
	if problem := r.problem(); problem != "" {
		return fail(problem)
	}
	return r, nil
}

type field struct {
	key   string
	value json.RawMessage
}

// objectFields returns the members of a JSON object in order, or a problem
// when raw is not an object. raw has already been checked as JSON.
func objectFields(raw json.RawMessage) ([]field, string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, "not an object"
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "not an object"
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, "not an object"
		}
		fields = append(fields, field{key: key, value: value})
	}
	return fields, ""
}

// fieldsProblem reports a key that appears twice: JSON decoders disagree
// about which one wins, so a strict format refuses both.
func fieldsProblem(fields []field) string {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if seen[f.key] {
			return fmt.Sprintf("key %s appears twice; keep one", quoteKey(f.key))
		}
		seen[f.key] = true
	}
	return ""
}

func decodeString(raw json.RawMessage, into *string) bool {
	return !isNull(raw) && json.Unmarshal(raw, into) == nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// quoteKey quotes a key for a message, shortened: keys are names, not
// values, but nothing unbounded goes into an error.
func quoteKey(key string) string {
	const max = 40
	if len(key) > max {
		return strconv.Quote(key[:max]) + "..."
	}
	return strconv.Quote(key)
}

func fileError(problem string) *RulesError {
	return &RulesError{Problem: problem, Err: ErrInvalidRules}
}

// fileRule is a rule as rules files hold it.
type fileRule struct {
	Tool    string   `json:"tool"`
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
		line, err := marshalNoEscape(fileRule{Tool: r.Tool, Pattern: r.Pattern, Command: r.Command, Allow: r.Allow, Reason: r.Reason})
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
