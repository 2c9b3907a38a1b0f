package contract_test

import (
	"testing"

	"github.com/basis-go/basis/contract"
)

func TestReservedNamesIgnoreCase(t *testing.T) {
	for _, name := range []string{"spawn", "Spawn", "SPAWN"} {
		if !contract.IsSpawnName(name) {
			t.Errorf("IsSpawnName(%q) = false", name)
		}
	}
	for _, name := range []string{"mcp__x", "MCP__x", "Mcp__x__y"} {
		if !contract.IsMCPName(name) {
			t.Errorf("IsMCPName(%q) = false", name)
		}
	}
	for _, name := range []string{"spawner", "mcp_x", "xmcp__"} {
		if contract.IsSpawnName(name) || contract.IsMCPName(name) {
			t.Errorf("%q is taken for a reserved name", name)
		}
	}
}
