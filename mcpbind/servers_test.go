package mcpbind_test

import (
	"testing"

	"github.com/basis-go/basis/mcpbind"
	"github.com/google/go-cmp/cmp"
)

func TestConfigServersInAndStdioServer(t *testing.T) {
	ws, op := "/repo/.mcp.json", "/home/me/.config/basis/mcp.json"
	cfg := &mcpbind.Config{
		Servers: []mcpbind.ServerConfig{
			{Name: "git", File: ws, Type: mcpbind.TypeStdio},
			{Name: "web", File: ws, Type: mcpbind.TypeHTTP},
			{Name: "fs", File: op, Type: mcpbind.TypeStdio},
			{Name: "host", Type: mcpbind.TypeStdio},
		},
		Shadowed: []mcpbind.ServerConfig{{Name: "fs", File: ws, Type: mcpbind.TypeStdio}},
	}
	files := []struct {
		file              string
		servers, shadowed []string
	}{
		{ws, []string{"git", "web"}, []string{"fs"}},
		{op, []string{"fs"}, nil},
		{"/elsewhere/.mcp.json", nil, nil},
	}
	for _, tt := range files {
		servers, shadowed := cfg.ServersIn(tt.file)
		if diff := cmp.Diff(tt.servers, servers); diff != "" {
			t.Errorf("ServersIn(%s) servers (-want +got):\n%s", tt.file, diff)
		}
		if diff := cmp.Diff(tt.shadowed, shadowed); diff != "" {
			t.Errorf("ServersIn(%s) shadowed (-want +got):\n%s", tt.file, diff)
		}
	}
	sources := []struct {
		source, name string
		ok           bool
	}{
		{ws + "#git", "git", true},
		{ws + "#web", "", false}, // HTTP: no program
		{ws + "#fs", "", false},  // shadowed: the operator's is used
		{op + "#fs", "fs", true},
		{"host#host", "host", true}, // a host's own server
		{"/other/.mcp.json#git", "", false},
	}
	for _, tt := range sources {
		name, ok := cfg.StdioServer(tt.source)
		if name != tt.name || ok != tt.ok {
			t.Errorf("StdioServer(%q) = %q, %v; want %q, %v", tt.source, name, ok, tt.name, tt.ok)
		}
	}
}
