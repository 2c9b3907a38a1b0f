//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/childenv"
)

// SpawnTool is the name under which spawn's commands get their policy from
// [Config.Policy]; the config file's "spawn" section applies to it.
const SpawnTool = contract.SpawnName

// ConfigFile is the operator's sandbox config, in basis's config
// directory; a workspace may ship a tightening one at .basis/sandbox.json.
const ConfigFile = "sandbox.json"

// Config is a parsed sandbox.json:
//
//	{
//	  "schema": 1,
//	  "mode": "workspace-write" | "read-only" | "off",
//	  "write": ["/srv/build"],
//	  "protect": [".envrc", "~/.config/git"],
//	  "spawn": {"mode": ..., "network": true, "write": [...]},
//	  "tools": {"NAME": {"mode": ..., "network": false, "write": [...]}},
//	  "pass_env": ["AWS_PROFILE", "GITHUB_*"]
//	}
//
// Every key but "schema" is optional; unknown keys are errors, so a
// misspelled "netwrok" never silently leaves the default in place.
type Config struct {
	// Mode is the default for every program; empty means WorkspaceWrite
	// in an operator file and "no opinion" in a workspace file.
	Mode Mode
	// Write names directories every program may also write, absolute
	// ("~/" is expanded when the file is parsed).
	Write []string
	// Protect names what stays read-only inside the writable directories,
	// besides .git, .basis and .mcp.json ([Policy.Protect]): absolute
	// paths ("~/" expanded), or relative ones looked up in every writable
	// directory. A workspace file may add relative ones only.
	Protect []string
	// Spawn adjusts the policy of spawn's commands.
	Spawn Override
	// Tools adjusts the policy of the named tools.
	Tools map[string]Override
	// PassEnv names variables that look like credentials which every
	// program basis starts inherits all the same (names, or patterns
	// with *; see contract/childenv): "pass_env". Only the operator's
	// file may set it; basis's own BASIS_* variables pass whatever it
	// says.
	PassEnv []string
}

// Override adjusts the policy of one tool (or of spawn).
type Override struct {
	// Mode replaces the default mode, when set.
	Mode Mode
	// Network, when set, replaces what the tool declared: an operator may
	// grant the network to a tool or take it away.
	Network *bool
	// Write adds directories to those in Config.Write.
	Write []string
}

// ParseConfig parses an operator's sandbox.json. file is its path, for
// messages; home expands a leading "~/" in write and protect paths, and
// every write path must end up absolute. The error is an [errors.Join] of
// one [*configfile.Error] per problem found, each with the line, column
// and field at fault; none quotes a value from the file.
func ParseConfig(file string, data []byte, home string) (*Config, error) {
	p := &configParser{file: file, data: data, home: home}
	c := p.parse()
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// ParseWorkspaceConfig parses a workspace's .basis/sandbox.json at file,
// which may only tighten the operator's policy: "off", "network": true,
// write paths and "pass_env" are load errors, as an allow rule in a
// workspace rules file is. It may add protected paths, which only tighten
// too; they must be relative (looked up in every writable directory, the
// workspace among them): a workspace names its own files, not the
// machine's. Errors are as [ParseConfig]'s. Apply the result with
// [Config.Tighten].
func ParseWorkspaceConfig(file string, data []byte) (*Config, error) {
	p := &configParser{file: file, data: data, workspace: true}
	c := p.parse()
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// Policy returns the operator's policy for one program: tool is the
// tool's name ([SpawnTool] for spawn's commands) and network what the tool
// declared (a declared tool's "network": true; true for an MCP stdio
// server; false for spawn, whose network comes from the "spawn" section).
// A nil Config is the default: workspace-write, the declared network.
func (c *Config) Policy(tool string, network bool) Policy {
	p := Policy{Mode: WorkspaceWrite, Network: network}
	if c == nil {
		return p
	}
	if c.Mode != "" {
		p.Mode = c.Mode
	}
	p.Write = append(p.Write, c.Write...)
	p.Protect = append(p.Protect, c.Protect...)
	o, ok := c.Tools[tool]
	if tool == SpawnTool {
		o, ok = c.Spawn, true
	}
	if ok {
		if o.Mode != "" {
			p.Mode = o.Mode
		}
		if o.Network != nil {
			p.Network = *o.Network
		}
		p.Write = append(p.Write, o.Write...)
	}
	return p
}

// Tighten applies a workspace config (from [ParseWorkspaceConfig]) to the
// operator's policy p for tool: only what the workspace sets, and only
// towards stricter. A nil Config leaves p as it is.
func (c *Config) Tighten(p Policy, tool string) Policy {
	if c == nil {
		return p
	}
	ws := Policy{Mode: Off, Network: true, Protect: c.Protect} // no opinion but the protected paths
	if c.Mode != "" {
		ws.Mode = c.Mode
	}
	o, ok := c.Tools[tool]
	if tool == SpawnTool {
		o, ok = c.Spawn, true
	}
	if ok {
		if o.Mode != "" && o.Mode.strictness() > ws.Mode.strictness() {
			ws.Mode = o.Mode
		}
		if o.Network != nil {
			ws.Network = *o.Network
		}
	}
	return Tighten(p, ws)
}

// configKeys and sectionKeys are the keys of sandbox.json and of its
// "spawn" and "tools" sections, for "unknown key" and "did you mean".
var (
	configKeys  = []string{"schema", "mode", "write", "protect", "spawn", "tools", "pass_env"}
	sectionKeys = []string{"mode", "network", "write"}
)

// configParser reads one sandbox.json, collecting every problem with its
// position rather than stopping at the first, so one edit fixes them all.
type configParser struct {
	file      string
	data      []byte
	home      string
	workspace bool // a workspace's file: it may only tighten
	errs      []error
}

// fail records a problem at byte offset off of the file.
func (p *configParser) fail(off int, subject, field, text string) {
	line, col := configfile.LineCol(p.data, off)
	p.errs = append(p.errs, &configfile.Error{File: p.file, Line: line, Column: col, Subject: subject, Field: field, Err: errors.New(text)})
}

// widen refuses, in a workspace's file, a setting that would widen the
// operator's sandbox.
func (p *configParser) widen(off int, subject, field string) {
	p.fail(off, subject, field, "a workspace sandbox.json may only tighten the sandbox; the operator's "+ConfigFile+" decides this")
}

func (p *configParser) parse() *Config {
	doc, err := configfile.Parse(p.data)
	if err != nil {
		var syn *configfile.SyntaxError
		if errors.As(err, &syn) {
			line, col := configfile.LineCol(p.data, syn.Off)
			p.errs = append(p.errs, &configfile.Error{File: p.file, Line: line, Column: col, Err: err})
		} else {
			p.errs = append(p.errs, &configfile.Error{File: p.file, Err: err})
		}
		return nil
	}
	if doc.Kind() != "object" {
		p.fail(doc.Off, "", "", "the file is "+doc.KindPhrase()+", not an object of the sandbox.json format (\"schema\": 1, \"mode\", \"write\", …)")
		return nil
	}
	c := &Config{}
	schema := false
	for _, m := range p.members(doc, "", configKeys) {
		v := m.Value
		switch m.Key {
		case "schema":
			schema = true
			if n, ok := number(v); !ok || n != "1" {
				p.fail(v.Off, "", "schema", "this basis reads schema 1; write \"schema\": 1")
			}
		case "mode":
			c.Mode = p.mode(v, "", "mode")
			if p.workspace && c.Mode == Off {
				p.widen(v.Off, "", "mode")
			}
		case "write":
			c.Write = p.writePaths(v, "", "write")
		case "protect":
			c.Protect = p.protectPaths(v)
		case "spawn":
			c.Spawn = p.section(v, "spawn")
		case "tools":
			if v.Kind() != "object" {
				p.fail(v.Off, "", "tools", "must be an object of tool names, not "+v.KindPhrase())
				continue
			}
			for _, t := range p.members(v, "", nil) {
				if t.Key == SpawnTool {
					p.fail(t.KeyOff, "", "tools."+SpawnTool, "set spawn's policy in the \"spawn\" section")
					continue
				}
				if c.Tools == nil {
					c.Tools = make(map[string]Override)
				}
				c.Tools[t.Key] = p.section(t.Value, "tool "+t.Key)
			}
		case "pass_env":
			c.PassEnv = p.passEnv(v)
		}
	}
	if !schema {
		p.fail(doc.Off, "", "schema", "missing; add \"schema\": 1")
	}
	return c
}

// members lists the members of object v, refusing a repeated key
// (encoding/json would keep the last, so {"mode": "read-only", "mode":
// "off"} would read as something other than what a reviewer sees first)
// and, when known is not nil, a key not in known.
func (p *configParser) members(v configfile.Value, subject string, known []string) []configfile.Member {
	var out []configfile.Member
	seen := map[string]bool{}
	for _, m := range v.Members() {
		switch {
		case seen[m.Key]:
			p.fail(m.KeyOff, subject, fieldName(m.Key), "appears twice; keep one")
		case known != nil && !slices.Contains(known, m.Key):
			p.unknown(m, subject, known)
		default:
			out = append(out, m)
		}
		seen[m.Key] = true
	}
	return out
}

// unknown refuses a key the format does not define, naming it only when
// it looks like a key: anything else may be a value written in the wrong
// place, so it is located by line and column instead.
func (p *configParser) unknown(m configfile.Member, subject string, known []string) {
	allowed := "the keys are " + strings.Join(known, ", ")
	if !configfile.LooksLikeKey(m.Key) {
		p.fail(m.KeyOff, subject, "", "unknown key (not shown: it may be a value written in the wrong place); "+allowed)
		return
	}
	if best := configfile.Suggest(m.Key, known, 1); len(best) > 0 {
		p.fail(m.KeyOff, subject, m.Key, "unknown key; did you mean "+best[0]+"? ("+allowed+")")
		return
	}
	p.fail(m.KeyOff, subject, m.Key, "unknown key ("+allowed+")")
}

// section reads the "spawn" section or one tool's.
func (p *configParser) section(v configfile.Value, subject string) Override {
	var o Override
	if v.Kind() != "object" {
		p.fail(v.Off, subject, "", "must be an object with mode, network or write, not "+v.KindPhrase())
		return o
	}
	for _, m := range p.members(v, subject, sectionKeys) {
		switch m.Key {
		case "mode":
			o.Mode = p.mode(m.Value, subject, "mode")
			if p.workspace && o.Mode == Off {
				p.widen(m.Value.Off, subject, "mode")
			}
		case "network":
			switch string(m.Value.Raw) {
			case "true", "false":
				b := string(m.Value.Raw) == "true"
				o.Network = &b
				if p.workspace && b {
					p.widen(m.Value.Off, subject, "network")
				}
			default:
				p.fail(m.Value.Off, subject, "network", "must be true or false, not "+m.Value.KindPhrase())
			}
		case "write":
			o.Write = p.writePaths(m.Value, subject, "write")
		}
	}
	return o
}

func (p *configParser) mode(v configfile.Value, subject, field string) Mode {
	s, ok := v.Text()
	if m := Mode(s); ok && m.Valid() {
		return m
	}
	p.fail(v.Off, subject, field, fmt.Sprintf("must be %q, %q or %q", WorkspaceWrite, ReadOnly, Off))
	return ""
}

// stringList reads an array of strings, reporting each element that is not
// one; the index of each string kept is its index in the file.
func (p *configParser) stringList(v configfile.Value, subject, field string) (vals []string, elems []configfile.Value) {
	if v.Kind() != "array" {
		p.fail(v.Off, subject, field, "must be a list of strings, not "+v.KindPhrase())
		return nil, nil
	}
	for i, e := range v.Elements() {
		s, ok := e.Text()
		if !ok {
			p.fail(e.Off, subject, fmt.Sprintf("%s[%d]", field, i), "must be a string, not "+e.KindPhrase())
			continue
		}
		vals = append(vals, s)
		elems = append(elems, e)
	}
	return vals, elems
}

func (p *configParser) writePaths(v configfile.Value, subject, field string) []string {
	vals, elems := p.stringList(v, subject, field)
	if p.workspace && v.Kind() == "array" && len(v.Elements()) > 0 {
		p.widen(v.Off, subject, field)
		return nil
	}
	var out []string
	for i, w := range vals {
		if rest, ok := strings.CutPrefix(w, "~/"); ok && p.home != "" {
			w = filepath.Join(p.home, rest)
		}
		if !filepath.IsAbs(w) || strings.IndexByte(w, 0) >= 0 {
			p.fail(elems[i].Off, subject, fmt.Sprintf("%s[%d]", field, index(v, elems[i])), "must be an absolute path or start with ~/")
			continue
		}
		out = append(out, filepath.Clean(w))
	}
	return out
}

// protectPaths checks and cleans protected paths: "~/" is expanded (in
// the operator's file), absolute paths are kept (in the operator's file),
// relative ones must stay inside the directory they are looked up in.
func (p *configParser) protectPaths(v configfile.Value) []string {
	vals, elems := p.stringList(v, "", "protect")
	var out []string
	for i, path := range vals {
		off, field := elems[i].Off, fmt.Sprintf("protect[%d]", index(v, elems[i]))
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			if p.workspace || p.home == "" {
				p.fail(off, "", field, "~/ stands for the operator's home, in the operator's file only")
				continue
			}
			path = filepath.Join(p.home, rest)
		}
		if err := validProtect(path); err != nil {
			p.fail(off, "", field, err.Error())
			continue
		}
		if p.workspace && filepath.IsAbs(path) {
			p.fail(off, "", field, "a workspace sandbox.json names protected paths relative to the workspace; absolute ones belong in the operator's "+ConfigFile)
			continue
		}
		out = append(out, filepath.Clean(path))
	}
	return out
}

func (p *configParser) passEnv(v configfile.Value) []string {
	if p.workspace {
		p.fail(v.Off, "", "pass_env", "a workspace sandbox.json cannot hand its programs the operator's credentials; only the operator's "+ConfigFile+" passes them")
		return nil
	}
	vals, elems := p.stringList(v, "", "pass_env")
	var out []string
	for i, pattern := range vals {
		if err := childenv.CheckPattern(pattern); err != nil {
			p.fail(elems[i].Off, "", fmt.Sprintf("pass_env[%d]", index(v, elems[i])), err.Error())
			continue
		}
		out = append(out, pattern)
	}
	return out
}

// index is the position of element e in array v, for a field name.
func index(v configfile.Value, e configfile.Value) int {
	for i, x := range v.Elements() {
		if x.Off == e.Off {
			return i
		}
	}
	return -1
}

// number is v's text when it is a JSON number.
func number(v configfile.Value) (string, bool) {
	if v.Kind() != "number" {
		return "", false
	}
	return string(v.Raw), true
}

// fieldName is a key as a field of a message: shown when it looks like
// a key, otherwise left out (it may be a value written in the wrong
// place).
func fieldName(key string) string {
	if configfile.LooksLikeKey(key) {
		return key
	}
	return ""
}
