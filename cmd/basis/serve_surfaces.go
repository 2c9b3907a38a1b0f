//go:build !nomcp

package main

import (
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	basisws "github.com/basis-go/basis/workspace"
)

// serveAllowHint is the command that allows a call for good, for a
// denial when the client cannot be asked: the workspace's AllowCommand, except for a
// server's resource reads and prompt gets (mcp__<server>, ADR 0016),
// which basis rules add cannot look up; an "always" answer in a client
// that can be asked saves their rule.
func serveAllowHint(req approver.Request) string {
	rest, ok := strings.CutPrefix(req.Tool, contract.MCPPrefix)
	if ok && !strings.Contains(rest, "__") {
		return ""
	}
	return basisws.AllowCommand(req)
}
