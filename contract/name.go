package contract

import (
	"errors"
	"fmt"
	"strings"
)

// MaxNameLen is the longest tool name every model provider accepts.
const MaxNameLen = 64

// MCPPrefix begins the name of every tool bridged from an MCP server
// ("mcp__<server>__<tool>"). No other binding may use it, so a workspace
// cannot declare a tool that passes for a server's.
const MCPPrefix = "mcp__"

// SpawnName is the name of basis's own tool for commands and delegation.
// It is reserved: no other tool may take it, in any letter case.
const SpawnName = "spawn"

// ErrInvalidName is wrapped by every error [CheckName] returns.
var ErrInvalidName = errors.New("invalid tool name")

// ValidName reports whether name is 1 to [MaxNameLen] characters of
// [A-Za-z0-9_-]: the set every model provider accepts for a tool name.
// It does not judge reserved prefixes; see [CheckName] and [MCPPrefix].
func ValidName(name string) bool { return CheckName(name) == nil }

// CheckName explains why name is not valid, or returns nil. The error wraps
// [ErrInvalidName] and says what to change, without quoting name.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the name is empty; use 1 to %d of A-Z a-z 0-9 _ -", ErrInvalidName, MaxNameLen)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %d characters is too long; use at most %d", ErrInvalidName, len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			// The name is not quoted: it may come from a file whose
			// values are not for printing, and callers name the tool
			// their own way.
			return fmt.Errorf("%w: character %d is not one of A-Z a-z 0-9 _ -", ErrInvalidName, i+1)
		}
	}
	return nil
}

// IsMCPName reports whether name carries the prefix reserved for tools
// bridged from MCP servers, in any letter case: "MCP__x" passes for an
// MCP tool to a reader as easily as "mcp__x" does.
func IsMCPName(name string) bool {
	return len(name) >= len(MCPPrefix) && strings.EqualFold(name[:len(MCPPrefix)], MCPPrefix)
}

// IsSpawnName reports whether name is [SpawnName] in any letter case.
func IsSpawnName(name string) bool { return strings.EqualFold(name, SpawnName) }

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
