package configfile_test

import (
	"reflect"
	"testing"

	"github.com/basis-go/basis/configfile"
)

func TestSuggest(t *testing.T) {
	names := []string{"jenkins_job", "json_query", "ticket", "deploy_api", "deploy_web", "timeout_ms"}
	tests := []struct {
		name string
		n    int
		want []string
	}{
		{"jenkins_jbo", 3, []string{"jenkins_job"}},
		{"Ticket", 3, []string{"ticket"}},
		{"deploy", 3, []string{"deploy_api", "deploy_web"}},
		{"deploy", 1, []string{"deploy_api"}},
		{"timout_ms", 3, []string{"timeout_ms"}},
		{"zzzzzzzz", 3, []string{}},
		{"", 3, []string{}},
	}
	for _, tt := range tests {
		if got := configfile.Suggest(tt.name, names, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Suggest(%q, %d) = %q, want %q", tt.name, tt.n, got, tt.want)
		}
	}
}
