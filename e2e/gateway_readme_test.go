package e2e_test

import (
	"context"
	"log/slog"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
	"github.com/basis-go/basis/mcpbind/mcpserve"
	"github.com/basis-go/basis/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveGateway is mcpbind/README.md's gateway example: what basis serve
// runs, for a host's own workspace. TestREADMECodeIsCompiled holds the
// README to it, and this file to compiling.
func serveGateway(ctx context.Context, ws *workspace.Workspace, logger *slog.Logger) error {
	gw, err := mcpserve.NewGateway(ctx,
		// The runtime from the files as they are now, the gate reading the
		// rules anew; the MCP tools come last, once everything else loaded.
		func(ctx context.Context, mcpTools func(context.Context) ([]contract.ExecutableTool, error)) (*runtime.Runtime, error) {
			return ws.Runtime(ctx, &workspace.RuntimeOptions{Approver: mcpserve.ElicitApprover(nil), MCPTools: mcpTools})
		},
		&mcpserve.GatewayOptions{
			// The MCP client of the workspace's files, trust, environment and
			// sandbox; the gateway has set o.ServerRequest and o.OnToolsChanged.
			Open: func(ctx context.Context, o *mcpbind.ManagerOptions) *mcpbind.Manager {
				return mcphost.Open(ctx, ws, o)
			},
			Watch: ws.ConfigFiles(), // an edit rebuilds the runtime
			// An edit also opens a new client; the old one is closed.
			ClientFiles: mcphost.ClientFiles(ws.Root(), ws.ConfigDir()),
			Logger:      logger, // each server's state, each reload; never stdout on stdio
		})
	if err != nil {
		return err // the first build's problems
	}
	defer gw.Close()                            // stops the servers
	return gw.Serve(ctx, &mcp.StdioTransport{}) // or gw.ListenAndServe
}

var _ = serveGateway
