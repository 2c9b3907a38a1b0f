//go:build unix

package mcpbind

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// maxPrefixLen bounds a tool_prefix: a name must keep room for the
// tool's own part and the hash a shortened name ends in.
const maxPrefixLen = 32

// exposedName returns the name a tool or prompt of the server is offered
// under: [ToolName] by default, or ToolPrefix followed by the name with
// characters outside [A-Za-z0-9_-] replaced by "_", shortened like
// [ToolName] when longer than [contract.MaxNameLen].
func (c ServerConfig) exposedName(name string) string {
	if c.ToolPrefix == nil {
		return ToolName(c.Name, name)
	}
	return shorten(*c.ToolPrefix+sanitize(name), c.Name, name)
}

// shorten cuts a name longer than contract.MaxNameLen to its beginning,
// "_" and eight hex digits of a hash of the server's and the tool's
// original names.
func shorten(exposed, server, tool string) string {
	if len(exposed) <= contract.MaxNameLen {
		return exposed
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return exposed[:contract.MaxNameLen-hashLen-1] + "_" + hex.EncodeToString(sum[:])[:hashLen]
}

// customPrefix reports whether the server's tools are named otherwise
// than mcp__<server>__.
func (c ServerConfig) customPrefix() bool {
	return c.ToolPrefix != nil && *c.ToolPrefix != serverPrefix(c.Name)
}

// prefixProblem says why prefix cannot be the server's tool_prefix, or "".
func prefixProblem(server, prefix string) string {
	switch {
	case prefix == serverPrefix(server):
		return ""
	case len(prefix) > maxPrefixLen:
		return "is longer than " + strconv.Itoa(maxPrefixLen) + " characters; tool names are at most " + strconv.Itoa(contract.MaxNameLen)
	case sanitize(prefix) != prefix && prefix != "":
		return "may hold only A-Z a-z 0-9 _ and -, the characters every model provider accepts in a tool name"
	case contract.IsMCPName(prefix):
		return `begins with "mcp__", which names the server a tool is from (mcp__<server>__); its tools could pass for another server's. ` +
			`Leave tool_prefix out for mcp__` + sanitize(server) + `__, or choose a prefix of another form`
	}
	return ""
}

// naming reads tool_prefix, enabled_tools, disabled_tools and
// max_output_tokens of a server entry.
func (p *configParser) naming(s *ServerConfig, fields map[string]configfile.Value, server string) {
	if f, ok := fields["tool_prefix"]; ok {
		if prefix, ok := p.str(f, server, "tool_prefix"); ok {
			if why := prefixProblem(s.Name, prefix); why != "" {
				p.report(f.Off, server, "tool_prefix", newProblem(errInvalidValue, why))
			} else {
				s.ToolPrefix = &prefix
			}
		}
	}
	for _, key := range []string{"enabled_tools", "disabled_tools"} {
		f, ok := fields[key]
		if !ok {
			continue
		}
		list := p.patterns(f, server, key)
		if key == "enabled_tools" {
			s.EnabledTools = list
		} else {
			s.DisabledTools = list
		}
	}
	if f, ok := fields["max_output_tokens"]; ok {
		s.MaxOutputTokens = p.tokens(f, server, "max_output_tokens")
	}
}

// patterns reads an array of tool names or * patterns.
func (p *configParser) patterns(v configfile.Value, server, field string) []string {
	if v.Kind() != "array" {
		p.report(v.Off, server, field, newProblem(errWrongType, "must be an array of tool names or patterns with *, not "+v.KindPhrase()))
		return nil
	}
	out := []string{} // present, even when empty: enabled_tools [] offers nothing
	for i, e := range v.Elements() {
		sub := field + "[" + strconv.Itoa(i) + "]"
		s, ok := p.str(e, server, sub)
		if !ok {
			continue
		}
		if strings.TrimSpace(s) == "" {
			p.report(e.Off, server, sub, newProblem(errInvalidValue, "is empty; write a tool's name as the server gives it, or a pattern such as \"list_*\""))
			continue
		}
		out = append(out, s)
	}
	return out
}

// maxOutputTokens bounds max_output_tokens: ten million tokens is far
// past any model's context.
const maxOutputTokens = 10_000_000

// tokens reads a max_output_tokens value: a whole number from 1.
func (p *configParser) tokens(v configfile.Value, server, field string) int {
	n, err := strconv.ParseInt(string(v.Raw), 10, 64)
	switch {
	case v.Kind() != "number":
		p.report(v.Off, server, field, newProblem(errWrongType, "must be a number of tokens, not "+v.KindPhrase()))
	case err != nil || n < 1 || n > maxOutputTokens:
		p.report(v.Off, server, field, newProblem(errInvalidValue, "must be a whole number of tokens from 1 to "+strconv.Itoa(maxOutputTokens)))
	default:
		return int(n)
	}
	return 0
}

// offered reports whether the server offers its tool remote: enabled
// (or no enabled_tools given) and not disabled.
func (c ServerConfig) offered(remote string) bool {
	if c.EnabledTools != nil && !matchAny(c.EnabledTools, remote) {
		return false
	}
	return !matchAny(c.DisabledTools, remote)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if globMatch(p, name) {
			return true
		}
	}
	return false
}

// globMatch reports whether name matches pattern, where * stands for any
// run of characters (none included) and every other character for
// itself: tool names hold no path, so nothing else is special.
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name = name[i+len(part):]
	}
	return len(name) >= len(last) && strings.HasSuffix(name, last)
}

// reservedProblem says why a server's tool may not be offered under
// exposed, or "": spawn's name, in any letter case, is basis's own tool,
// and a name beginning with mcp__ from a server whose names are not
// mcp__<server>__ would pass for another server's tool.
func (c ServerConfig) reservedProblem(remote, exposed string) string {
	switch {
	case contract.IsSpawnName(exposed):
		return "tool " + strconv.Quote(remote) + " would be named " + exposed + ", which is basis's own tool for commands (spawn); " +
			"it is not offered. Set a tool_prefix for server " + printableName(c.Name) + ", or hide the tool with disabled_tools"
	case c.customPrefix() && contract.IsMCPName(exposed):
		return "tool " + strconv.Quote(remote) + " would be named " + exposed + ", a name that says it is a tool of MCP server " +
			strconv.Quote(strings.SplitN(exposed[len(contract.MCPPrefix):], "__", 2)[0]) + "; it is not offered. Set another tool_prefix, or hide the tool with disabled_tools"
	}
	return ""
}
