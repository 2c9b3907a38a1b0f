//go:build unix

package spawn_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/basis-go/basis/spawn"
	"github.com/basis-go/basis/subprocess"
)

// TestDefinitionIsTheSandboxProfile: what an approval of spawn records is
// how its commands are confined — the profile when the sandbox gives one,
// else its subject; nothing without a sandbox; {} when commands cannot be
// confined here.
func TestDefinitionIsTheSandboxProfile(t *testing.T) {
	fake := &fakeSandbox{}
	withProfile := func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
		c, err := fake.hook(tool, network, dir)
		c.Profile = json.RawMessage(`{"write":[],"network":"none","mode":"read-only"}`)
		return c, err
	}
	broken := func(string, bool, string) (*subprocess.Confinement, error) { return nil, errors.New("no Landlock") }
	tests := []struct {
		name    string
		sandbox func(string, bool, string) (*subprocess.Confinement, error)
		want    string
	}{
		{"no sandbox", nil, ""},
		{"a profile", withProfile, `{"sandbox":{"mode":"read-only","network":"none","write":[]}}`},
		{"a subject only", fake.hook, `{"sandbox":` + fakeSandboxSubject + `}`},
		{"a sandbox that cannot confine", broken, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := spawn.New(t.TempDir(), &spawn.Options{Sandbox: tt.sandbox})
			if err != nil {
				t.Fatal(err)
			}
			def, err := tool.Definition(context.Background())
			if err != nil || string(def) != tt.want {
				t.Errorf("Definition = %s, %v; want %s", def, err, tt.want)
			}
		})
	}
}
