//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/configfile"
)

// The config files basis reads: the workspace's, in its root (the name
// other agents read too), and the operator's, in the operator config dir.
const (
	WorkspaceFileName = ".mcp.json"
	OperatorFileName  = "mcp.json"
)

// LoadOptions says where [Load] finds servers; nil finds a host's only.
type LoadOptions struct {
	// Root is the workspace root, ConfigDir the operator's; empty: none.
	Root      string
	ConfigDir string
	// Host lists a host's servers, the least specific layer.
	Host []ServerConfig
	// Trust says which workspace files the operator trusted (nil: none).
	Trust Trust
}

// ConfigFile is one config file [Load] read.
type ConfigFile struct {
	// Path is absolute, links resolved; the operator's file is Trusted.
	Path   string
	Origin Origin
	Trust  TrustState
	// Pinned are the files its servers run ([Pin]); Changed those changed.
	Changed []string
	Pinned  map[string]string
}

// Config is the layered set of servers [Load] read.
type Config struct {
	// Servers are in name order; Shadowed those hidden by a more specific one.
	Servers  []ServerConfig
	Shadowed []ServerConfig
	// Files are the config files read, most specific first.
	Files []ConfigFile
	Root  string
	// MaxOutputTokens is the operator's top-level "max_output_tokens".
	MaxOutputTokens int
}

// Trust returns the trust in server's file (Trusted: not a workspace's).
func (c *Config) Trust(server string) TrustState {
	if f := c.fileOf(server); f != nil {
		return f.Trust
	}
	for _, s := range c.Servers {
		if s.Name == server && !s.Origin.workspace() {
			return Trusted
		}
	}
	return Untrusted
}

// fileOf is the workspace file the named server came from, or nil.
func (c *Config) fileOf(server string) *ConfigFile {
	for _, s := range c.Servers {
		if s.Name != server || !s.Origin.workspace() {
			continue
		}
		for i := range c.Files {
			if c.Files[i].Path == s.File {
				return &c.Files[i]
			}
		}
	}
	return nil
}

// Load reads <Root>/.mcp.json and <ConfigDir>/mcp.json over the host's
// servers, starting nothing; each problem is a joined *configfile.Error.
func Load(ctx context.Context, o *LoadOptions) (*Config, error) {
	var opts LoadOptions
	if o != nil {
		opts = *o
	}
	cfg := &Config{Root: opts.Root}
	if cfg.Root != "" {
		if abs, err := filepath.Abs(cfg.Root); err == nil {
			cfg.Root = abs
		}
	}
	var errs []error
	trust := opts.Trust
	var layers [][]ServerConfig
	read := func(dir, name string, origin Origin) {
		if dir == "" {
			return
		}
		path, err := resolvePath(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			errs = append(errs, err)
			return
		}
		if origin.workspace() {
			if err := inWorkspace(dir, filepath.Join(dir, name)); err != nil {
				errs = append(errs, err)
				return
			}
		}
		data, mode, err := readConfigFile(ctx, path)
		if err != nil {
			errs = append(errs, err)
			return
		}
		if origin == OriginOperator && mode.Perm()&0o022 != 0 {
			// Its servers start without asking and may have their
			// annotations trusted: another user must not be able to add
			// one.
			errs = append(errs, &configfile.Error{File: path, Err: newProblem(errUnreadable,
				"is writable by other users, so its servers are not used; chmod go-w it")})
			return
		}
		file := ConfigFile{Path: path, Origin: origin, Trust: Trusted}
		var pins map[string]string
		if origin.workspace() {
			file.Trust = Untrusted
			if trust != nil {
				// The hash is of the bytes parsed below: a file changed
				// in between cannot slip through.
				state, trusted, err := trust.Trusted(ctx, path, contentHash(data))
				if err != nil {
					errs = append(errs, err)
					state = Untrusted
				}
				file.Trust, pins = state, trusted
			}
		}
		servers, budget, err := parseFile(path, data, origin)
		if err != nil {
			errs = append(errs, err)
		}
		if origin == OriginOperator {
			// Only the operator sets the budget of every server; a
			// workspace file's top-level key is another agent's.
			cfg.MaxOutputTokens = budget
		}
		if file.Trust == Trusted && origin.workspace() {
			// The content is trusted; what its servers run must be too.
			state, changed, pinned, verr := verify(ctx, path, servers, pins)
			if verr != nil {
				errs = append(errs, verr)
			}
			file.Trust, file.Changed, file.Pinned = state, changed, pinned
		}
		cfg.Files = append(cfg.Files, file)
		if origin.workspace() {
			for i := range servers {
				servers[i].Root = opts.Root
			}
		}
		layers = append(layers, servers)
	}
	read(opts.Root, WorkspaceFileName, OriginWorkspace)
	read(opts.ConfigDir, OperatorFileName, OriginOperator)
	host, err := checkHostServers(opts.Host)
	if err != nil {
		errs = append(errs, err)
	}
	layers = append(layers, host)

	var layerErrs []error
	cfg.Servers, cfg.Shadowed, layerErrs = layer(layers, cfg.Files)
	errs = append(errs, layerErrs...)
	slices.SortFunc(cfg.Servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return cfg, errors.Join(errs...)
}

// maxConfigSize bounds a config or trust file: far above any real one,
// far below what could exhaust memory.
const maxConfigSize = configfile.DefaultLimit

// readConfigFile reads a config or trust file the one careful way basis
// reads config files (configfile.ReadInfo: no blocking on a FIFO, a
// regular file after symlinks, bounded, cancellable) and returns it with
// the mode of the file read. A problem is a [*configfile.Error] wrapping
// [errUnreadable] that names the file and never its content.
func readConfigFile(ctx context.Context, path string) ([]byte, fs.FileMode, error) {
	data, info, err := configfile.ReadInfo(ctx, path, maxConfigSize)
	if err == nil {
		return data, info.Mode(), nil
	}
	text := configfile.ReadProblem(ctx, err, maxConfigSize, "an MCP config")
	return nil, 0, &configfile.Error{File: path, Err: &problem{kind: errUnreadable, cause: err, text: text}}
}

// osReason is the operating system's part of err, without the path it
// quotes.

// checkHostServers applies the file format's rules to servers a host
// supplies in Go.
func checkHostServers(servers []ServerConfig) ([]ServerConfig, error) {
	var out []ServerConfig
	var errs []error
	seen := map[string]bool{}
	for _, s := range servers {
		s.Origin = OriginHost
		s.Args = slices.Clone(s.Args)
		bad := func(field string, err error) {
			errs = append(errs, &configfile.Error{File: s.File, Subject: subjectOf(printableName(s.Name)), Field: field, Err: err})
		}
		n := len(errs)
		switch {
		case s.Name == "":
			bad("", newProblem(errInvalidValue, "a server name is empty; name the server"))
		case seen[s.Name]:
			bad("", newProblem(errDuplicateKey, "the server name is given twice; keep one"))
		case nameProblem(s.Name) != "":
			bad("", newProblem(errInvalidValue, nameProblem(s.Name)))
		}
		seen[s.Name] = true
		if s.Type == "" {
			s.Type = TypeStdio
			if s.URL != "" {
				s.Type = TypeHTTP
			}
		}
		switch s.Type {
		case TypeStdio:
			if strings.TrimSpace(s.Command) == "" {
				bad("command", newProblem(errMissingField, "a stdio server needs a Command"))
			}
		case TypeHTTP, TypeSSE:
			if strings.TrimSpace(s.URL) == "" {
				bad("url", newProblem(errMissingField, "an "+s.Type+" server needs a URL"))
			}
		default:
			bad("type", newProblem(errUnknownType, "unknown type "+printableName(s.Type)+"; use stdio, http or sse"))
		}
		for field, text := range s.templates() {
			names, err := configfile.Placeholders(text)
			if err != nil {
				cause := placeholderProblem(err)
				bad(field, cause)
			} else if name, ok := basisPlaceholder(names); ok {
				bad(field, basisVariableProblem(name))
			}
		}
		if s.StartupTimeout < 0 || s.CallTimeout < 0 {
			bad("", newProblem(errInvalidValue, "a timeout is negative"))
		}
		if s.ToolPrefix != nil {
			if why := prefixProblem(s.Name, *s.ToolPrefix); why != "" {
				bad("tool_prefix", newProblem(errInvalidValue, why))
			}
		}
		if s.MaxOutputTokens < 0 || s.MaxOutputTokens > maxOutputTokens {
			bad("max_output_tokens", newProblem(errInvalidValue, "must be from 0 (the Manager's budget) to "+itoa(maxOutputTokens)))
		}
		for field, list := range map[string][]string{"enabled_tools": s.EnabledTools, "disabled_tools": s.DisabledTools} {
			if slices.ContainsFunc(list, func(p string) bool { return strings.TrimSpace(p) == "" }) {
				bad(field, newProblem(errInvalidValue, "a tool name or pattern is empty"))
			}
		}
		s.EnabledTools, s.DisabledTools = slices.Clone(s.EnabledTools), slices.Clone(s.DisabledTools)
		if len(errs) == n {
			out = append(out, s)
		}
	}
	return out, errors.Join(errs...)
}

// templates yields every field of s that may hold ${VAR} placeholders,
// by field name.
func (s *ServerConfig) templates() map[string]string {
	m := map[string]string{"command": s.Command, "cwd": s.Cwd, "url": s.URL}
	for i, a := range s.Args {
		m["args["+itoa(i)+"]"] = a
	}
	s.Env.each(func(n, v string) { m["env."+n] = v })
	s.Headers.each(func(n, v string) { m["headers."+n] = v })
	return m
}
