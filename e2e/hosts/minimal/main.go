// Command minimal is a host that embeds basis the way a stranger's program
// would, in about ten lines: the workspace library gives it the workspace
// found from where it runs, its declared tools sandboxed, the system,
// operator and workspace rules in front of its approver, and an audit
// file. `make release-check` builds it outside the workspace, from modules
// served the way a module proxy serves them, checks that no spawn, MCP
// SDK, shell parser or terminal package is in its module graph, and runs
// it in testdata/ws: a call runs, a write outside the workspace is stopped
// by the sandbox, a call the workspace's rules deny is denied although
// this host allows everything, and the audit records the sandbox.
//
//	minimal TOOL JSON
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/workspace"
)

func main() {
	if err := workspace.Main(); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ws, err := workspace.Open(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	rt, err := ws.Runtime(ctx, &workspace.RuntimeOptions{Approver: approver.AllowAll(), Audit: "audit.jsonl"})
	if err != nil {
		log.Fatal(err)
	}
	out := rt.Call(ctx, os.Args[1], contract.Call{ID: "1", Input: []byte(os.Args[2])})
	fmt.Printf("minimal host: %s: %s: %s\n", os.Args[1], out.Status, out.Text)
}
