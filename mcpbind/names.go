//go:build unix

package mcpbind

import (
	"strconv"
	"strings"

	"github.com/basis-go/basis/contract"
)

// sanitize replaces every character outside [A-Za-z0-9_-] with "_", so a
// server's or tool's name fits the set every model provider accepts.
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && nameByte(byte(r)) || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// serverPrefix is what every tool name of the server begins with.
func serverPrefix(server string) string {
	return contract.MCPPrefix + sanitize(server) + "__"
}

// hashLen is how many hex digits of SHA-256 end a shortened name.
const hashLen = 8

// ToolName returns the basis name of tool on server,
// "mcp__<server>__<tool>", sanitised and shortened to
// [contract.MaxNameLen] with a hash when too long.
func ToolName(server, tool string) string {
	return shorten(serverPrefix(server)+sanitize(tool), server, tool)
}

func itoa(i int) string { return strconv.Itoa(i) }

// nameByte reports whether c is one of A-Z a-z 0-9 _.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// SandboxName is a stdio server's tool name for a [subprocess.Confiner]:
// "mcp__<server>", so an operator tightens one server as one tool.
func SandboxName(server string) string { return contract.MCPPrefix + server }
