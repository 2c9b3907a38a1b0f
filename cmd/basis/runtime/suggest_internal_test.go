//go:build unix

package runtime

import (
	"testing"

	"github.com/basis-go/basis/configfile"
	"github.com/google/go-cmp/cmp"
)

// TestClosestNamesAgreesWithSuggest keeps the runtime's private "did you
// mean" for tool names the same as the config readers' one: a typo gets
// the same help from a manifest and from a model's call.
func TestClosestNamesAgreesWithSuggest(t *testing.T) {
	names := []string{"jenkins_job", "json_query", "ticket", "deploy_api", "deploy_web", "timeout_ms", "mcp__github__create_issue"}
	tests := []struct {
		name string
		n    int
		want []string
	}{
		{"jenkins_jbo", 3, []string{"jenkins_job"}},
		{"Ticket", 3, []string{"ticket"}},
		{"deploy", 3, []string{"deploy_api", "deploy_web"}},
		{"deploy", 1, []string{"deploy_api"}},
		{"create_issue", 3, []string{"mcp__github__create_issue"}},
		{"zzzzzzzz", 3, []string{}},
		{"", 3, []string{}},
	}
	for _, tt := range tests {
		got := closestNames(tt.name, names, tt.n)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("closestNames(%q, %d) (-want +got):\n%s", tt.name, tt.n, diff)
		}
		if diff := cmp.Diff(configfile.Suggest(tt.name, names, tt.n), got); diff != "" {
			t.Errorf("closestNames(%q, %d) differs from configfile.Suggest (-Suggest +closestNames):\n%s", tt.name, tt.n, diff)
		}
	}
}
