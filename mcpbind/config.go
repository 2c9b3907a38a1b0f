//go:build unix

package mcpbind

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract/childenv"
)

// Default timeouts, used when a server does not set its own.
const (
	defaultStartupTimeout = 30 * time.Second
	defaultCallTimeout    = 60 * time.Second
	// maxTimeout is the longest startup_timeout_ms or call_timeout_ms a
	// config may ask for.
	maxTimeout = 24 * time.Hour
)

// Server types: how basis reaches a server.
const (
	TypeStdio = "stdio" // a program basis starts, spoken to over stdin and stdout
	TypeHTTP  = "http"  // the streamable HTTP transport
	TypeSSE   = "sse"   // the older HTTP+SSE transport
)

// Origin says where a server's configuration came from: a workspace's
// servers run only once trusted, their trust_annotations ignored.
type Origin string

const (
	OriginWorkspace Origin = "workspace" // a repository's .mcp.json; also the zero Origin
	OriginOperator  Origin = "operator"  // the operator's <config dir>/mcp.json
	OriginHost      Origin = "host"      // a server a Go host supplied in code
)

// workspace reports whether servers of this origin are the workspace's:
// every origin but the operator's and the host's, the zero one included.
func (o Origin) workspace() bool { return o != OriginOperator && o != OriginHost }

// ServerConfig is one configured MCP server as written (${VAR}s
// unexpanded); the README describes each key.
type ServerConfig struct {
	// Name is the key under "mcpServers"; Type a Type* constant.
	Name string
	Type string
	// Command, Args, Env and Cwd (relative to File's directory) start a
	// stdio server; URL and Headers reach an http or sse server.
	Command        string
	Args           []string
	Env            *Values
	Cwd            string
	URL            string
	Headers        *Values
	StartupTimeout time.Duration // 0: 30 s
	CallTimeout    time.Duration // 0: 60 s
	// TrustAnnotations lets readOnlyHint lower the side effect.
	TrustAnnotations bool
	// File is absolute (empty for a host's server); a workspace
	// server's cwd stays in Root (empty: File's directory).
	File   string
	Origin Origin
	Root   string
	// ToolPrefix replaces "mcp__<server>__" in tool and prompt names.
	ToolPrefix *string
	// EnabledTools and DisabledTools filter tools by name or * pattern.
	EnabledTools  []string
	DisabledTools []string
	// MaxOutputTokens is the server's output budget (0: the Manager's).
	MaxOutputTokens int
	// OAuth is an http or sse server's "oauth": sign-in is expected.
	OAuth *OAuthConfig
}

// The keys of a server basis reads; any other key is left for the other
// agents that share the format.
var serverKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers",
	"startup_timeout_ms", "call_timeout_ms", "trust_annotations",
	"tool_prefix", "enabled_tools", "disabled_tools", "max_output_tokens", "oauth"}

// parseConfig reads one .mcp.json or mcp.json document. file is the path
// used in messages and recorded in each [ServerConfig]; origin says what
// kind of file it is.
//
// It returns the servers that are well formed, in name order, and every
// problem found as an [errors.Join] of [*configfile.Error] values. A problem of
// the file as a whole (not JSON, no "mcpServers") yields no server; a
// problem of one server drops only that server. Unset variables are not
// problems here: a ${VAR} is looked up when the server starts.
func parseConfig(file string, data []byte, origin Origin) ([]ServerConfig, error) {
	servers, _, err := parseFile(file, data, origin)
	return servers, err
}

// parseFile is parseConfig that also returns the file's top-level
// "max_output_tokens" (0 when absent), the operator's output budget.
func parseFile(file string, data []byte, origin Origin) ([]ServerConfig, int, error) {
	p := &configParser{file: file, data: data, origin: origin}
	servers := p.parse()
	return servers, p.budget, p.err()
}

type configParser struct {
	file     string
	data     []byte
	origin   Origin
	problems []*configfile.Error
	budget   int // the file's top-level max_output_tokens
}

func (p *configParser) report(off int, server, field string, err error) {
	e := &configfile.Error{File: p.file, Subject: subjectOf(server), Field: field, Err: err}
	if off >= 0 {
		e.Line, e.Column = configfile.LineCol(p.data, off)
	}
	p.problems = append(p.problems, e)
}

func (p *configParser) err() error {
	if len(p.problems) == 0 {
		return nil
	}
	slices.SortStableFunc(p.problems, func(a, b *configfile.Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	errs := make([]error, len(p.problems))
	for i, e := range p.problems {
		errs[i] = e
	}
	return errors.Join(errs...)
}

func (p *configParser) parse() []ServerConfig {
	doc, err := configfile.Parse(p.data)
	if err != nil {
		p.reportSyntax(err)
		return nil
	}
	if doc.Kind() != "object" {
		p.report(doc.Off, "", "", newProblem(errWrongType,
			`an MCP config is a JSON object such as {"mcpServers": {}}, not `+doc.KindPhrase()))
		return nil
	}
	var servers *configfile.Member
	for _, m := range doc.Members() {
		if m.Key == "max_output_tokens" {
			p.budget = p.tokens(m.Value, "", "max_output_tokens")
			continue
		}
		if m.Key != "mcpServers" {
			continue // other agents keep their own keys here
		}
		if servers != nil {
			p.report(m.KeyOff, "", "mcpServers", newProblem(errDuplicateKey, "written twice; keep one"))
			return nil
		}
		servers = &m
	}
	if servers == nil {
		p.report(doc.Off, "", "mcpServers", newProblem(errMissingField,
			`missing; an MCP config is {"mcpServers": {"NAME": {"command": "..."}}}`))
		return nil
	}
	if servers.Value.Kind() != "object" {
		p.report(servers.Value.Off, "", "mcpServers", newProblem(errWrongType,
			"must be an object of servers by name, not "+servers.Value.KindPhrase()))
		return nil
	}
	var out []ServerConfig
	seen := map[string]bool{}
	for _, m := range servers.Value.Members() {
		name := m.Key
		if seen[name] {
			p.report(m.KeyOff, printableName(name), "", newProblem(errDuplicateKey, "the server name is written twice; keep one"))
			out = slices.DeleteFunc(out, func(s ServerConfig) bool { return s.Name == name })
			continue
		}
		seen[name] = true
		if s, ok := p.server(m); ok {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// reportSyntax reports why the file is not one JSON value, in words for
// an MCP config, never quoting the text at fault.
func (p *configParser) reportSyntax(err error) {
	var se *configfile.SyntaxError
	if !errors.As(err, &se) {
		p.report(0, "", "", newProblem(errSyntax, "not valid JSON"))
		return
	}
	text := se.Error()
	switch se.Kind {
	case configfile.SyntaxEmpty:
		text = `the file is empty; an MCP config is an object such as {"mcpServers": {}}`
	case configfile.SyntaxTrailing:
		text = "there is more after the JSON object ends; a config file is one object"
	}
	p.report(se.Off, "", "", &problem{kind: errSyntax, cause: se, text: text})
}

// serverTypes are the values "type" may have.
var serverTypes = []string{TypeStdio, TypeHTTP, TypeSSE}

// quotable reports whether a word the format does not know may be quoted
// in a message, by the rule declared applies to unknown keys: it looks
// like a key (configfile.LooksLikeKey) and is either a near miss of a
// known word or a short word with no digits. Anything else may be a value
// written in the wrong place — a token is a short run of letters and
// digits — so it is located by line and column instead.
func quotable(word string, known []string) bool {
	if !configfile.LooksLikeKey(word) {
		return false
	}
	return len(configfile.Suggest(word, known, 1)) > 0 || len(word) <= 20 && !strings.ContainsAny(word, "0123456789")
}

// printableName is a server name fit for a message: server names are
// keys, not credentials, but a control character would break the line.
func printableName(name string) string {
	if name != "" && strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		return name
	}
	return strconv.Quote(name)
}

func (p *configParser) server(m configfile.Member) (ServerConfig, bool) {
	name := printableName(m.Key)
	before := len(p.problems)
	if m.Key == "" {
		p.report(m.KeyOff, "", "", newProblem(errInvalidValue, "a server name is empty; name the server"))
		return ServerConfig{}, false
	}
	if why := nameProblem(m.Key); why != "" {
		p.report(m.KeyOff, name, "", newProblem(errInvalidValue, why))
		return ServerConfig{}, false
	}
	if m.Value.Kind() != "object" {
		p.report(m.Value.Off, name, "", newProblem(errWrongType, "a server is an object such as {\"command\": \"...\"}, not "+m.Value.KindPhrase()))
		return ServerConfig{}, false
	}
	s := ServerConfig{Name: m.Key, File: p.file, Origin: p.origin}
	fields := map[string]configfile.Value{}
	for _, f := range m.Value.Members() {
		if !slices.Contains(serverKeys, f.Key) {
			continue // other agents' keys, such as "disabled"
		}
		if _, dup := fields[f.Key]; dup {
			p.report(f.KeyOff, name, f.Key, newProblem(errDuplicateKey, "written twice; keep one"))
			continue
		}
		fields[f.Key] = f.Value
	}
	if f, ok := fields["type"]; ok {
		if t, ok := p.str(f, name, "type"); ok {
			switch t {
			case TypeStdio, TypeHTTP, TypeSSE:
				s.Type = t
			default:
				// A word that reads as a keyword is quoted, to show the
				// reader the typo; anything else may be a value written
				// in the wrong place, and is only located.
				written := "(not shown: it may be a value written in the wrong place)"
				if quotable(t, serverTypes) {
					written = strconv.Quote(t)
				}
				p.report(f.Off, name, "type", newProblem(errUnknownType,
					"unknown type "+written+"; use stdio, http or sse"))
			}
		}
	}
	command, hasCommand := fields["command"]
	url, hasURL := fields["url"]
	switch {
	case s.Type == "" && hasCommand && hasURL:
		p.report(m.Value.Off, name, "", newProblem(errInvalidValue,
			`has both "command" and "url"; keep one, or set "type"`))
	case s.Type == "" && hasCommand:
		s.Type = TypeStdio
	case s.Type == "" && hasURL:
		s.Type = TypeHTTP
	case s.Type == "" && len(p.problems) == before:
		p.report(m.Value.Off, name, "command", newProblem(errMissingField,
			`a server needs "command" (a program to start) or "url" (a server to reach)`))
	}
	switch s.Type {
	case TypeStdio:
		if !hasCommand {
			p.report(m.Value.Off, name, "command", newProblem(errMissingField, `a stdio server needs "command"`))
			break
		}
		if c, ok := p.str(command, name, "command"); ok {
			switch {
			case strings.TrimSpace(c) == "":
				p.report(command.Off, name, "command", newProblem(errInvalidValue, "is empty; name the program to start"))
			case p.template(command.Off, name, "command", c):
				s.Command = c
			}
		}
		if f, ok := fields["args"]; ok {
			s.Args = p.args(f, name)
		}
		if f, ok := fields["env"]; ok {
			s.Env = p.values(f, name, "env")
		}
		if f, ok := fields["cwd"]; ok {
			if c, ok := p.str(f, name, "cwd"); ok && p.template(f.Off, name, "cwd", c) {
				s.Cwd = c
			}
		}
	case TypeHTTP, TypeSSE:
		if !hasURL {
			p.report(m.Value.Off, name, "url", newProblem(errMissingField, "an "+s.Type+` server needs "url"`))
			break
		}
		if u, ok := p.str(url, name, "url"); ok {
			switch {
			case strings.TrimSpace(u) == "":
				p.report(url.Off, name, "url", newProblem(errInvalidValue, "is empty; give the server's address"))
			case p.template(url.Off, name, "url", u):
				s.URL = u
			}
		}
		if f, ok := fields["headers"]; ok {
			s.Headers = p.values(f, name, "headers")
		}
		if f, ok := fields["oauth"]; ok {
			s.OAuth = p.oauth(f, name)
		}
	}
	if _, ok := fields["oauth"]; ok && s.Type == TypeStdio {
		p.report(fields["oauth"].Off, name, "oauth", newProblem(errInvalidValue, "only an http or sse server signs in; remove \"oauth\""))
	}
	s.StartupTimeout = p.timeout(fields, name, "startup_timeout_ms")
	s.CallTimeout = p.timeout(fields, name, "call_timeout_ms")
	if f, ok := fields["trust_annotations"]; ok {
		switch string(f.Raw) {
		case "true":
			// A workspace file cannot vouch for its own servers.
			s.TrustAnnotations = !p.origin.workspace()
		case "false":
		default:
			p.report(f.Off, name, "trust_annotations", newProblem(errWrongType, "must be true or false, not "+f.KindPhrase()))
		}
	}
	p.naming(&s, fields, name)
	return s, len(p.problems) == before
}

// str reads a string field.
func (p *configParser) str(v configfile.Value, server, field string) (string, bool) {
	s, ok := v.Text()
	if !ok {
		p.report(v.Off, server, field, newProblem(errWrongType, "must be a string, not "+v.KindPhrase()))
		return "", false
	}
	if strings.IndexByte(s, 0) >= 0 {
		p.report(v.Off, server, field, newProblem(errInvalidValue, "holds a NUL byte, which no program or header can carry"))
		return "", false
	}
	return s, true
}

// template checks the ${...} placeholders of s without looking any
// variable up.
func (p *configParser) template(off int, server, field, s string) bool {
	names, err := configfile.Placeholders(s)
	if err != nil {
		cause := placeholderProblem(err)
		p.report(off, server, field, cause)
		return false
	}
	if name, ok := basisPlaceholder(names); ok {
		p.report(off, server, field, basisVariableProblem(name))
		return false
	}
	return true
}

// basisPlaceholder returns the first of names that is one of basis's own
// variables (BASIS_*): a placeholder that must not be expanded.
func basisPlaceholder(names []string) (string, bool) {
	for _, n := range names {
		if childenv.IsBasisVariable(n) {
			return n, true
		}
	}
	return "", false
}

// basisVariableProblem refuses a ${BASIS_...} placeholder: expanded, it
// would hand a server what childenv keeps from it — BASIS_SERVE_TOKEN
// answers basis's own approval questions.
func basisVariableProblem(name string) error {
	return newProblem(errInvalidValue, "${"+name+"} names one of basis's own variables (BASIS_*), which are never handed to a program basis starts; "+
		"write the value the server needs, or set it in a variable of another name")
}

func (p *configParser) args(v configfile.Value, server string) []string {
	if v.Kind() != "array" {
		p.report(v.Off, server, "args", newProblem(errWrongType, "must be an array of strings, not "+v.KindPhrase()))
		return nil
	}
	var out []string
	for i, e := range v.Elements() {
		field := "args[" + strconv.Itoa(i) + "]"
		a, ok := p.str(e, server, field)
		if ok && p.template(e.Off, server, field, a) {
			out = append(out, a)
		}
	}
	return out
}

// values reads "env" or "headers": an object of strings.
func (p *configParser) values(obj configfile.Value, server, field string) *Values {
	if obj.Kind() != "object" {
		p.report(obj.Off, server, field, newProblem(errWrongType, "must be an object of strings, not "+obj.KindPhrase()))
		return nil
	}
	m := map[string]string{}
	for _, e := range obj.Members() {
		sub := field + "." + printableName(e.Key)
		if _, dup := m[e.Key]; dup {
			p.report(e.KeyOff, server, sub, newProblem(errDuplicateKey, "written twice; keep one"))
			continue
		}
		if bad := badValueName(field, e.Key); bad != "" {
			p.report(e.KeyOff, server, sub, newProblem(errInvalidValue, bad))
			continue
		}
		v, ok := p.str(e.Value, server, sub)
		if !ok || !p.template(e.Value.Off, server, sub, v) {
			continue
		}
		if field == "headers" && strings.ContainsAny(v, "\r\n") {
			p.report(e.Value.Off, server, sub, newProblem(errInvalidValue, "holds a line break, which would end the header early"))
			continue
		}
		m[e.Key] = v
	}
	return NewValues(m)
}

// badValueName explains why name is not an env variable or header name.
func badValueName(field, name string) string {
	if field == "env" {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return "is not a variable name: it is empty or holds = or a NUL byte"
		}
		return ""
	}
	if name == "" {
		return "is not a header name: it is empty"
	}
	for i := 0; i < len(name); i++ {
		if !headerNameByte(name[i]) {
			return "is not a header name: use letters, digits and ! # $ % & ' * + - . ^ _ ` | ~"
		}
	}
	return ""
}

func headerNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *configParser) timeout(fields map[string]configfile.Value, server, field string) time.Duration {
	f, ok := fields[field]
	if !ok {
		return 0
	}
	if f.Kind() != "number" {
		p.report(f.Off, server, field, newProblem(errWrongType, "must be a number of milliseconds, not "+f.KindPhrase()))
		return 0
	}
	var ms json.Number
	_ = json.Unmarshal(f.Raw, &ms)
	n, err := ms.Int64()
	if err != nil || n < 1 || time.Duration(n) > maxTimeout/time.Millisecond {
		p.report(f.Off, server, field, newProblem(errInvalidValue,
			"must be a whole number of milliseconds from 1 to "+strconv.FormatInt(int64(maxTimeout/time.Millisecond), 10)))
		return 0
	}
	return time.Duration(n) * time.Millisecond
}
