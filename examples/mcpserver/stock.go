//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type item struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Bin   string `json:"bin"`
}

type inventory struct {
	Warehouse string `json:"warehouse"`
	Items     []item `json:"items"`
}

type stockLevelInput struct {
	Name string `json:"name" jsonschema:"the item, such as bolt"`
}

type reserveInput struct {
	Name  string `json:"name" jsonschema:"the item to reserve"`
	Count int    `json:"count" jsonschema:"how many to reserve, at least 1"`
}

// stockRoom answers from the inventory file and keeps the reservations
// made while the server runs.
type stockRoom struct {
	path string

	mu       sync.Mutex
	reserved map[string]int
	next     int
}

func (s *stockRoom) load() (*inventory, error) {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("reading the inventory: %w", err)
	}
	var inv inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		return nil, fmt.Errorf("the inventory %s is not valid JSON: %w", s.path, err)
	}
	return &inv, nil
}

func (s *stockRoom) find(name string) (*inventory, *item, error) {
	inv, err := s.load()
	if err != nil {
		return nil, nil, err
	}
	for i := range inv.Items {
		if inv.Items[i].Name == name {
			return inv, &inv.Items[i], nil
		}
	}
	return nil, nil, fmt.Errorf("no item %q in warehouse %s", name, inv.Warehouse)
}

func (s *stockRoom) stockLevel(_ context.Context, _ *mcp.CallToolRequest, in stockLevelInput) (*mcp.CallToolResult, any, error) {
	inv, it, err := s.find(in.Name)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	held := s.reserved[it.Name]
	s.mu.Unlock()
	text := fmt.Sprintf("%s: %d in bin %s, warehouse %s", it.Name, it.Count-held, it.Bin, inv.Warehouse)
	if held > 0 {
		text += fmt.Sprintf(" (%d more reserved)", held)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

func (s *stockRoom) reserve(_ context.Context, _ *mcp.CallToolRequest, in reserveInput) (*mcp.CallToolResult, any, error) {
	if in.Count < 1 {
		return nil, nil, fmt.Errorf("count must be at least 1")
	}
	_, it, err := s.find(in.Name)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserved == nil {
		s.reserved = map[string]int{}
	}
	if left := it.Count - s.reserved[it.Name]; in.Count > left {
		return nil, nil, fmt.Errorf("only %d %s left to reserve", left, it.Name)
	}
	s.reserved[it.Name] += in.Count
	s.next++
	text := fmt.Sprintf("reservation R%d: %d %s from bin %s", s.next, in.Count, it.Name, it.Bin)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

// newServer returns the stock room's MCP server.
func newServer(inventoryPath string) *mcp.Server {
	room := &stockRoom{path: inventoryPath}
	server := mcp.NewServer(&mcp.Implementation{Name: "stockroom", Version: "0.1.0"}, nil)
	notDestructive := false
	mcp.AddTool(server, &mcp.Tool{
		Name:        "stock_level",
		Title:       "Stock level",
		Description: "How many of an item are on hand, and in which bin.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, room.stockLevel)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "reserve_stock",
		Title:       "Reserve stock",
		Description: "Hold some of an item for an order, so nobody else takes it.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &notDestructive},
	}, room.reserve)
	return server
}
