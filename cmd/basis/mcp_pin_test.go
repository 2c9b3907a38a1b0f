//go:build unix && !nomcp

package main

import (
	"path/filepath"
	"testing"
)

// TestCLIMCPTrustPinsWhatRuns is the issue: trusting .mcp.json trusted
// whatever its command later was, so a server program a sandboxed
// command rewrote started — with the network and the operator's
// environment — at the next basis tools, which asks nothing. The trust
// pins the program; a rewritten one is not started, and tools, mcp list,
// check and a call name the file. An allow rule for one of its tools
// records the tool's definition: a server entry changed (and trusted
// again) is asked about again, saying what changed.
func TestCLIMCPTrustPinsWhatRuns(t *testing.T) {
	original := "#!/bin/sh\necho started >> started\nexec .basis/bin/mcpserver \"$@\"\n"
	stock := []string{"call", "mcp__stockroom__stock_level", `{"name": "bracket"}`, "--approve", "allow"}
	reserve := []string{"call", "mcp__stockroom__reserve_stock", `{"name": "bracket", "count": 2}`, "--approve", "deny"}
	started := []string{"call", "spawn", `{"input": "!cat started"}`, "--approve", "allow"}
	cases := []cliCase{
		{name: "mcp_trust_pins_what_runs", setup: stockroomWorkspace, steps: []step{
			{args: []string{"mcp", "trust"}, want: exitOK},
			{args: stock, want: exitOK},
			{before: rewrite("a sandboxed command rewrites the server's program", ".basis/bin/stockroom.sh",
				"#!/bin/sh\necho rewritten >> started\nexec .basis/bin/mcpserver \"$@\"\n"),
				args: []string{"tools"}, want: exitOK},
			{args: []string{"mcp", "list"}, want: exitOK},
			{args: []string{"check"}, want: exitOK},
			{args: stock, want: exitRefused},
			{args: started, want: exitOK},
			{before: rewrite("the program is put back", ".basis/bin/stockroom.sh", original),
				args: stock, want: exitOK},
			{args: []string{"rules", "add", "--tool", "mcp__stockroom__reserve_stock", "--allow"}, want: exitOK},
			{args: reserve, want: exitOK},
			{before: &edit{note: "the repository gives the server an env variable and an argument; the operator trusts it again", do: func(t *testing.T, ws, _ string) {
				write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"stockroom": {"command": ".basis/bin/stockroom.sh", "args": ["-inventory", "data/inventory.json"], "env": {"STOCK_API_KEY": "s3cr3t-in-the-file"}}}}`)
			}}, args: []string{"mcp", "trust"}, want: exitOK},
			{args: reserve, want: exitRefused},
			{args: []string{"rules", "list", "--json"}, want: exitOK},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runCase(t, tc) })
	}
}
