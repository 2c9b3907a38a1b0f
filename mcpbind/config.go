//go:build unix

package mcpbind

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Default timeouts, used when a server does not set its own.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultCallTimeout    = 60 * time.Second
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

// Origin says where a server's configuration came from, which decides
// whether it needs trust and whether its annotations may be trusted.
type Origin int

const (
	// OriginWorkspace: a repository's <root>/.mcp.json. Its servers are
	// code the repository asks to run: they start only once the operator
	// trusted the file, and trust_annotations in it is ignored.
	OriginWorkspace Origin = iota
	// OriginOperator: the operator's <config dir>/mcp.json.
	OriginOperator
	// OriginHost: a server a Go host supplied in code.
	OriginHost
)

// String returns "workspace", "operator" or "host".
func (o Origin) String() string {
	switch o {
	case OriginWorkspace:
		return "workspace"
	case OriginOperator:
		return "operator"
	case OriginHost:
		return "host"
	}
	return "Origin(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText implements [encoding.TextMarshaler]: JSON shows the word.
func (o Origin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ServerConfig is one configured MCP server, as written: strings hold their
// ${VAR} placeholders unexpanded, and env and header values are kept in
// [*Values], which never print their values.
type ServerConfig struct {
	// Name is the server's name, the key under "mcpServers".
	Name string
	// Type is TypeStdio, TypeHTTP or TypeSSE.
	Type string
	// Command, Args, Env and Cwd start a stdio server. A relative Cwd is
	// taken from the config file's directory; an empty one is that
	// directory for a workspace server and basis's own directory
	// otherwise.
	Command string
	Args    []string
	Env     *Values
	Cwd     string
	// URL and Headers reach an http or sse server; the headers go with
	// every request.
	URL     string
	Headers *Values
	// StartupTimeout bounds starting the server and the MCP handshake;
	// CallTimeout bounds each call. Zero means the defaults,
	// [DefaultStartupTimeout] and [DefaultCallTimeout].
	StartupTimeout time.Duration
	CallTimeout    time.Duration
	// TrustAnnotations lets a tool's readOnlyHint lower its side effect to
	// none. Only the operator's file and a host may set it.
	TrustAnnotations bool
	// File is the absolute path of the config file the server came from;
	// empty for a host's server.
	File string
	// Origin is where the configuration came from.
	Origin Origin
}

// The keys of a server basis reads; any other key is left for the other
// agents that share the format.
var serverKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers",
	"startup_timeout_ms", "call_timeout_ms", "trust_annotations"}

// ParseConfig reads one .mcp.json or mcp.json document. file is the path
// used in messages and recorded in each [ServerConfig]; origin says what
// kind of file it is.
//
// It returns the servers that are well formed, in name order, and every
// problem found as an [errors.Join] of [*ConfigError] values. A problem of
// the file as a whole (not JSON, no "mcpServers") yields no server; a
// problem of one server drops only that server. Unset variables are not
// problems here: a ${VAR} is looked up when the server starts.
func ParseConfig(file string, data []byte, origin Origin) ([]ServerConfig, error) {
	p := &configParser{file: file, data: data, origin: origin}
	servers := p.parse()
	return servers, p.err()
}

type configParser struct {
	file     string
	data     []byte
	origin   Origin
	problems []*ConfigError
}

func (p *configParser) report(off int, server, field, variable string, err error) {
	e := &ConfigError{File: p.file, Server: server, Field: field, Variable: variable, Err: err}
	if off >= 0 {
		e.Line, e.Column = lineCol(p.data, off)
	}
	p.problems = append(p.problems, e)
}

func (p *configParser) err() error {
	if len(p.problems) == 0 {
		return nil
	}
	slices.SortStableFunc(p.problems, func(a, b *ConfigError) int {
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
	doc, start, bad := checkDocument(p.data)
	if bad != nil {
		p.report(bad.off, "", "", "", bad.err)
		return nil
	}
	if jsonKind(doc) != "object" {
		p.report(start, "", "", "", newProblem(ErrWrongType,
			`an MCP config is a JSON object such as {"mcpServers": {}}, not `+article(jsonKind(doc))))
		return nil
	}
	var servers *member
	for _, m := range objectMembers(doc, start) {
		if m.key != "mcpServers" {
			continue // other agents keep their own keys here
		}
		if servers != nil {
			p.report(m.keyOff, "", "mcpServers", "", newProblem(ErrDuplicateKey, "written twice; keep one"))
			return nil
		}
		servers = &m
	}
	if servers == nil {
		p.report(start, "", "mcpServers", "", newProblem(ErrMissingField,
			`missing; an MCP config is {"mcpServers": {"NAME": {"command": "..."}}}`))
		return nil
	}
	if k := jsonKind(servers.val); k != "object" {
		p.report(servers.valOff, "", "mcpServers", "", newProblem(ErrWrongType,
			"must be an object of servers by name, not "+article(k)))
		return nil
	}
	var out []ServerConfig
	seen := map[string]bool{}
	for _, m := range objectMembers(servers.val, servers.valOff) {
		name := m.key
		if seen[name] {
			p.report(m.keyOff, printableName(name), "", "", newProblem(ErrDuplicateKey, "the server name is written twice; keep one"))
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

// printableName is a server name fit for a message: server names are
// keys, not credentials, but a control character would break the line.
func printableName(name string) string {
	if name != "" && strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		return name
	}
	return strconv.Quote(name)
}

func (p *configParser) server(m member) (ServerConfig, bool) {
	name := printableName(m.key)
	before := len(p.problems)
	if m.key == "" {
		p.report(m.keyOff, "", "", "", newProblem(ErrInvalidValue, "a server name is empty; name the server"))
		return ServerConfig{}, false
	}
	if k := jsonKind(m.val); k != "object" {
		p.report(m.valOff, name, "", "", newProblem(ErrWrongType, "a server is an object such as {\"command\": \"...\"}, not "+article(k)))
		return ServerConfig{}, false
	}
	s := ServerConfig{Name: m.key, File: p.file, Origin: p.origin}
	fields := map[string]member{}
	for _, f := range objectMembers(m.val, m.valOff) {
		if !slices.Contains(serverKeys, f.key) {
			continue
		}
		if _, dup := fields[f.key]; dup {
			p.report(f.keyOff, name, f.key, "", newProblem(ErrDuplicateKey, "written twice; keep one"))
			continue
		}
		fields[f.key] = f
	}
	if f, ok := fields["type"]; ok {
		if t, ok := p.str(f, name, "type"); ok {
			switch t {
			case TypeStdio, TypeHTTP, TypeSSE:
				s.Type = t
			default:
				// The type is a keyword, never a credential: quoting it
				// shows the reader the typo.
				p.report(f.valOff, name, "type", "", newProblem(ErrUnknownType,
					"unknown type "+strconv.Quote(t)+"; use stdio, http or sse"))
			}
		}
	}
	command, hasCommand := fields["command"]
	url, hasURL := fields["url"]
	switch {
	case s.Type == "" && hasCommand && hasURL:
		p.report(m.valOff, name, "", "", newProblem(ErrInvalidValue,
			`has both "command" and "url"; keep one, or set "type"`))
	case s.Type == "" && hasCommand:
		s.Type = TypeStdio
	case s.Type == "" && hasURL:
		s.Type = TypeHTTP
	case s.Type == "" && len(p.problems) == before:
		p.report(m.valOff, name, "command", "", newProblem(ErrMissingField,
			`a server needs "command" (a program to start) or "url" (a server to reach)`))
	}
	switch s.Type {
	case TypeStdio:
		if !hasCommand {
			p.report(m.valOff, name, "command", "", newProblem(ErrMissingField, `a stdio server needs "command"`))
			break
		}
		if c, ok := p.str(command, name, "command"); ok {
			switch {
			case strings.TrimSpace(c) == "":
				p.report(command.valOff, name, "command", "", newProblem(ErrInvalidValue, "is empty; name the program to start"))
			case p.template(command.valOff, name, "command", c):
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
			if c, ok := p.str(f, name, "cwd"); ok && p.template(f.valOff, name, "cwd", c) {
				s.Cwd = c
			}
		}
	case TypeHTTP, TypeSSE:
		if !hasURL {
			p.report(m.valOff, name, "url", "", newProblem(ErrMissingField, "an "+s.Type+` server needs "url"`))
			break
		}
		if u, ok := p.str(url, name, "url"); ok {
			switch {
			case strings.TrimSpace(u) == "":
				p.report(url.valOff, name, "url", "", newProblem(ErrInvalidValue, "is empty; give the server's address"))
			case p.template(url.valOff, name, "url", u):
				s.URL = u
			}
		}
		if f, ok := fields["headers"]; ok {
			s.Headers = p.values(f, name, "headers")
		}
	}
	s.StartupTimeout = p.timeout(fields, name, "startup_timeout_ms")
	s.CallTimeout = p.timeout(fields, name, "call_timeout_ms")
	if f, ok := fields["trust_annotations"]; ok {
		switch f.val[0] {
		case 't':
			// A workspace file cannot vouch for its own servers.
			s.TrustAnnotations = p.origin != OriginWorkspace
		case 'f':
		default:
			p.report(f.valOff, name, "trust_annotations", "", newProblem(ErrWrongType, "must be true or false, not "+article(jsonKind(f.val))))
		}
	}
	return s, len(p.problems) == before
}

// str reads a string field.
func (p *configParser) str(f member, server, field string) (string, bool) {
	if k := jsonKind(f.val); k != "string" {
		p.report(f.valOff, server, field, "", newProblem(ErrWrongType, "must be a string, not "+article(k)))
		return "", false
	}
	s := decodeString(f.val)
	if strings.IndexByte(s, 0) >= 0 {
		p.report(f.valOff, server, field, "", newProblem(ErrInvalidValue, "holds a NUL byte, which no program or header can carry"))
		return "", false
	}
	return s, true
}

// template checks the ${...} placeholders of s without looking any
// variable up.
func (p *configParser) template(off int, server, field, s string) bool {
	if err := checkTemplate(s); err != nil {
		p.report(off, server, field, err.variable, err.err)
		return false
	}
	return true
}

// checkTemplate reports a malformed placeholder in s.
func checkTemplate(s string) *expandError {
	if !strings.Contains(s, "${") {
		return nil
	}
	x := &expander{s: s, lookup: func(string) (string, bool) { return "", true }}
	if _, err := x.text(0, false); err != nil {
		ee, _ := err.(*expandError)
		return ee
	}
	return nil
}

func (p *configParser) args(f member, server string) []string {
	if k := jsonKind(f.val); k != "array" {
		p.report(f.valOff, server, "args", "", newProblem(ErrWrongType, "must be an array of strings, not "+article(k)))
		return nil
	}
	var out []string
	for i, e := range arrayElements(f.val, f.valOff) {
		field := "args[" + strconv.Itoa(i) + "]"
		a, ok := p.str(member{val: e.val, valOff: e.off}, server, field)
		if ok && p.template(e.off, server, field, a) {
			out = append(out, a)
		}
	}
	return out
}

// values reads "env" or "headers": an object of strings.
func (p *configParser) values(f member, server, field string) *Values {
	if k := jsonKind(f.val); k != "object" {
		p.report(f.valOff, server, field, "", newProblem(ErrWrongType, "must be an object of strings, not "+article(k)))
		return nil
	}
	m := map[string]string{}
	for _, e := range objectMembers(f.val, f.valOff) {
		sub := field + "." + printableName(e.key)
		if _, dup := m[e.key]; dup {
			p.report(e.keyOff, server, sub, "", newProblem(ErrDuplicateKey, "written twice; keep one"))
			continue
		}
		if bad := badValueName(field, e.key); bad != "" {
			p.report(e.keyOff, server, sub, "", newProblem(ErrInvalidValue, bad))
			continue
		}
		v, ok := p.str(e, server, sub)
		if !ok || !p.template(e.valOff, server, sub, v) {
			continue
		}
		if field == "headers" && strings.ContainsAny(v, "\r\n") {
			p.report(e.valOff, server, sub, "", newProblem(ErrInvalidValue, "holds a line break, which would end the header early"))
			continue
		}
		m[e.key] = v
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

func (p *configParser) timeout(fields map[string]member, server, field string) time.Duration {
	f, ok := fields[field]
	if !ok {
		return 0
	}
	if k := jsonKind(f.val); k != "number" {
		p.report(f.valOff, server, field, "", newProblem(ErrWrongType, "must be a number of milliseconds, not "+article(k)))
		return 0
	}
	var ms json.Number
	_ = json.Unmarshal(f.val, &ms)
	n, err := ms.Int64()
	if err != nil || n < 1 || time.Duration(n) > maxTimeout/time.Millisecond {
		p.report(f.valOff, server, field, "", newProblem(ErrInvalidValue,
			"must be a whole number of milliseconds from 1 to "+strconv.FormatInt(int64(maxTimeout/time.Millisecond), 10)))
		return 0
	}
	return time.Duration(n) * time.Millisecond
}
