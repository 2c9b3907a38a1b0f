//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStockRoom(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "inventory.json")
	if err := os.WriteFile(inv, []byte(`{"warehouse": "north", "items": [{"name": "bolt", "count": 10, "bin": "A3"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	clientT, serverT := mcp.NewInMemoryTransports()
	if _, err := newServer(inv).Connect(ctx, serverT, nil); err != nil {
		t.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	list, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := map[string]bool{}
	for _, tl := range list.Tools {
		readOnly[tl.Name] = tl.Annotations != nil && tl.Annotations.ReadOnlyHint
	}
	if diff := cmp.Diff(map[string]bool{"reserve_stock": false, "stock_level": true}, readOnly); diff != "" {
		t.Errorf("tools and their readOnlyHint (-want +got):\n%s", diff)
	}

	steps := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"stock_level", map[string]any{"name": "bolt"}, "bolt: 10 in bin A3, warehouse north", false},
		{"reserve_stock", map[string]any{"name": "bolt", "count": 4}, "reservation R1: 4 bolt from bin A3", false},
		{"stock_level", map[string]any{"name": "bolt"}, "bolt: 6 in bin A3, warehouse north (4 more reserved)", false},
		{"reserve_stock", map[string]any{"name": "bolt", "count": 7}, "only 6 bolt left to reserve", true},
		{"stock_level", map[string]any{"name": "nut"}, `no item "nut" in warehouse north`, true},
	}
	for _, s := range steps {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.args})
		if err != nil {
			t.Fatalf("%s: %v", s.tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if diff := cmp.Diff(s.want, text); diff != "" || res.IsError != s.isError {
			t.Errorf("%s %v: isError %v (-want +got):\n%s", s.tool, s.args, res.IsError, diff)
		}
	}
}
