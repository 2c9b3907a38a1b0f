//go:build unix

package signin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/signin"
)

// A host signs in to remote servers as basis does: the operator's tokens
// in <config dir>/mcp-tokens, the browser flow of `basis mcp login`.
func ExampleLoopback() {
	configDir := filepath.Join(os.TempDir(), "example-config")
	opts := &mcpbind.ManagerOptions{
		Tokens: signin.NewFileStore(filepath.Join(configDir, mcpbind.TokensDirName)),
		SignIn: func(ctx context.Context, server string) (*signin.Flow, error) {
			return signin.Loopback(ctx, server, &signin.LoopbackOptions{Open: signin.Browser(os.Environ(), os.Stderr)})
		},
	}
	m := mcpbind.NewManager(&mcpbind.Config{}, opts)
	defer m.Close()
	fmt.Println(len(m.Status()), "servers")
	// Output: 0 servers
}
