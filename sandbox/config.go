//go:build unix

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/childenv"
	"io"
	"path/filepath"
	"sort"
	"strings"
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

type configFile struct {
	Schema  *int                    `json:"schema"`
	Mode    *string                 `json:"mode"`
	Write   []string                `json:"write"`
	Protect []string                `json:"protect"`
	Spawn   *overrideFile           `json:"spawn"`
	Tools   map[string]overrideFile `json:"tools"`
	// PassEnv is not a sandbox policy but what else a program is
	// handed: the operator's one file about what programs may reach.
	PassEnv []string `json:"pass_env"`
}

type overrideFile struct {
	Mode    *string  `json:"mode"`
	Network *bool    `json:"network"`
	Write   []string `json:"write"`
}

// ParseConfig parses an operator's sandbox.json. home expands a leading
// "~/" in write paths; every write path must end up absolute. Errors wrap
// [ErrInvalidPolicy], name the key at fault and quote no value.
func ParseConfig(data []byte, home string) (*Config, error) {
	f, err := decodeConfig(data)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if f.Mode != nil {
		if c.Mode, err = parseMode(*f.Mode, "mode"); err != nil {
			return nil, err
		}
	}
	if c.Write, err = writePaths(f.Write, home, "write"); err != nil {
		return nil, err
	}
	if c.Protect, err = protectPaths(f.Protect, home, "protect"); err != nil {
		return nil, err
	}
	if f.Spawn != nil {
		if c.Spawn, err = f.Spawn.override(home, "spawn"); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedKeys(f.Tools) {
		if name == SpawnTool {
			return nil, fmt.Errorf("%w: tools.%s: set spawn's policy in the \"spawn\" section", ErrInvalidPolicy, SpawnTool)
		}
		o, err := f.Tools[name].override(home, "tools."+name)
		if err != nil {
			return nil, err
		}
		if c.Tools == nil {
			c.Tools = make(map[string]Override)
		}
		c.Tools[name] = o
	}
	for i, p := range f.PassEnv {
		if err := childenv.CheckPattern(p); err != nil {
			return nil, fmt.Errorf("%w: pass_env[%d]: %w", ErrInvalidPolicy, i, err)
		}
	}
	c.PassEnv = f.PassEnv
	return c, nil
}

// ParseWorkspaceConfig parses a workspace's .basis/sandbox.json, which
// may only tighten the operator's policy: "off", "network": true, write
// paths and "pass_env" are load errors, as an allow rule in a workspace
// rules file is. It may add protected paths, which only tighten too; they
// must be relative (looked up in every writable directory, the workspace
// among them): a workspace names its own files, not the machine's. Apply
// the result with [Config.Tighten].
func ParseWorkspaceConfig(data []byte) (*Config, error) {
	c, err := ParseConfig(data, "")
	if err != nil {
		return nil, err
	}
	widen := func(key string) error {
		return fmt.Errorf("%w: %s: a workspace sandbox.json may only tighten the sandbox; the operator's %s decides this", ErrInvalidPolicy, key, ConfigFile)
	}
	check := func(prefix string, mode Mode, network *bool, write []string) error {
		switch {
		case mode == Off:
			return widen(prefix + "mode")
		case network != nil && *network:
			return widen(prefix + "network")
		case len(write) > 0:
			return widen(prefix + "write")
		}
		return nil
	}
	if err := check("", c.Mode, nil, c.Write); err != nil {
		return nil, err
	}
	if len(c.PassEnv) > 0 {
		return nil, fmt.Errorf("%w: pass_env: a workspace sandbox.json cannot hand its programs the operator's credentials; only the operator's %s passes them", ErrInvalidPolicy, ConfigFile)
	}
	for i, p := range c.Protect {
		if filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: protect[%d]: a workspace sandbox.json names protected paths relative to the workspace; absolute ones belong in the operator's %s", ErrInvalidPolicy, i, ConfigFile)
		}
	}
	if err := check("spawn.", c.Spawn.Mode, c.Spawn.Network, c.Spawn.Write); err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(c.Tools) {
		o := c.Tools[name]
		if err := check("tools."+name+".", o.Mode, o.Network, o.Write); err != nil {
			return nil, err
		}
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

func decodeConfig(data []byte) (*configFile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f configFile
	if err := dec.Decode(&f); err != nil {
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: unexpected data after the JSON object", ErrInvalidPolicy)
	}
	if err := checkDuplicateKeys(data); err != nil {
		return nil, err
	}
	switch {
	case f.Schema == nil:
		return nil, fmt.Errorf("%w: missing \"schema\": add \"schema\": 1", ErrInvalidPolicy)
	case *f.Schema != 1:
		return nil, fmt.Errorf("%w: schema %d is not supported (this basis reads schema 1)", ErrInvalidPolicy, *f.Schema)
	}
	return &f, nil
}

// jsonError turns a decoding error into one that gives a line and column
// or a key, never the offending text.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := position(data, syn.Offset-1) // Offset is just past the bad byte
		return fmt.Errorf("%w: JSON syntax error at line %d, column %d", ErrInvalidPolicy, line, col)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		return fmt.Errorf("%w: %s: expected %s", ErrInvalidPolicy, typ.Field, typ.Type)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("%w: unknown key %s (the keys are schema, mode, write, protect, spawn, tools, pass_env; in a section mode, network, write)", ErrInvalidPolicy, msg)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the file is empty or ends early", ErrInvalidPolicy)
	}
	return fmt.Errorf("%w: the file is not a JSON object of the sandbox.json format", ErrInvalidPolicy)
}

func position(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < offset && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// checkDuplicateKeys refuses an object with a repeated key: encoding/json
// would keep the last, so {"mode": "read-only", "mode": "off"} would read
// as something other than what a reviewer sees first.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := make(map[string]bool)
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if seen[key] {
					return fmt.Errorf("%w: key %s%s appears twice", ErrInvalidPolicy, path, key)
				}
				seen[key] = true
				if err := walk(path + key + "."); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(path); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil && errors.Is(err, ErrInvalidPolicy) {
		return err
	}
	return nil
}

func (o overrideFile) override(home, key string) (Override, error) {
	var out Override
	var err error
	if o.Mode != nil {
		if out.Mode, err = parseMode(*o.Mode, key+".mode"); err != nil {
			return Override{}, err
		}
	}
	out.Network = o.Network
	if out.Write, err = writePaths(o.Write, home, key+".write"); err != nil {
		return Override{}, err
	}
	return out, nil
}

func parseMode(s, key string) (Mode, error) {
	m := Mode(s)
	if !m.Valid() {
		return "", fmt.Errorf("%w: %s must be %q, %q or %q", ErrInvalidPolicy, key, WorkspaceWrite, ReadOnly, Off)
	}
	return m, nil
}

func writePaths(paths []string, home, key string) ([]string, error) {
	var out []string
	for i, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			p = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
			return nil, fmt.Errorf("%w: %s[%d] must be an absolute path or start with ~/", ErrInvalidPolicy, key, i)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// protectPaths checks and cleans protected paths: "~/" is expanded
// (when home is known), absolute paths are kept, relative ones must stay
// inside the directory they are looked up in.
func protectPaths(paths []string, home, key string) ([]string, error) {
	var out []string
	for i, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" {
				return nil, fmt.Errorf("%w: %s[%d]: ~/ stands for the operator's home, in the operator's file only", ErrInvalidPolicy, key, i)
			}
			p = filepath.Join(home, rest)
		}
		if err := validProtect(p); err != nil {
			return nil, fmt.Errorf("%w: %s[%d] %s", ErrInvalidPolicy, key, i, err)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
