//go:build unix

package mcpbind_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/google/go-cmp/cmp"
)

func TestEstimateTokens(t *testing.T) {
	for text, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, strings.Repeat("x", 100_000): 25_000} {
		if got := mcpbind.EstimateTokens(text); got != want {
			t.Errorf("EstimateTokens(%d bytes) = %d, want %d", len(text), got, want)
		}
	}
}

var keptAt = regexp.MustCompile(`the whole result is in (\S+); read it in parts`)

// bigCall calls the test server's big tool of a server configured as cfg
// under a Manager with opts, for text repeated times, and returns the
// result's text.
func bigCall(t *testing.T, cfg *mcpbind.Config, opts *mcpbind.ManagerOptions, text string, times int) string {
	t.Helper()
	return bigResult(t, cfg, opts, text, times).Text
}

// bigResult is bigCall's whole result.
func bigResult(t *testing.T, cfg *mcpbind.Config, opts *mcpbind.ManagerOptions, text string, times int) contract.Result {
	t.Helper()
	m := mcpbind.NewManager(cfg, opts)
	t.Cleanup(func() { m.Close() })
	inMemory(t, m, testserver.Options{Big: true})
	tools, err := m.ServerTools(context.Background(), cfg.Servers[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if mcpbind.RemoteName(tl.(*mcpbind.Tool)) == "big" {
			res, err := tl.Execute(context.Background(), contract.Call{Input: []byte(`{"text": ` + strconv.Quote(text) + `, "times": ` + strconv.Itoa(times) + `}`)})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatal("no tool big")
	return contract.Result{}
}

// The content blocks a gateway passes on are budgeted as the text is:
// the text blocks give way to the cut text, the image passes whole.
func TestOutputBudgetCutsTheTextBlocks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		budget int
		cut    bool
	}{{"fits", 0, false}, {"cut", 100, true}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &mcpbind.Config{MaxOutputTokens: tt.budget, Servers: []mcpbind.ServerConfig{{Name: "s", Command: "x", Origin: mcpbind.OriginOperator}}}
			res := bigResult(t, cfg, &mcpbind.ManagerOptions{OutputDir: t.TempDir()}, "0123456789\n", 100)
			var kinds []string
			var text string
			for _, b := range res.Content {
				var block struct{ Type, Text, Data string }
				if err := json.Unmarshal(b, &block); err != nil {
					t.Fatal(err)
				}
				kinds = append(kinds, block.Type)
				if block.Type == "text" {
					text = block.Text
				}
				if block.Type == "image" && len(block.Data) == 0 {
					t.Error("the image lost its data")
				}
			}
			if diff := cmp.Diff([]string{"text", "image"}, kinds); diff != "" {
				t.Errorf("content kinds (-want +got):\n%s", diff)
			}
			whole := strings.Repeat("0123456789\n", 100)
			switch {
			case tt.cut && (text != res.Text || !strings.Contains(text, "[basis: this result of MCP server s was cut")):
				t.Errorf("the text block (%d bytes) is not the cut text with its note (%d bytes)", len(text), len(res.Text))
			case !tt.cut && text != whole:
				t.Errorf("a text block that fits was changed: %d bytes, want %d", len(text), len(whole))
			}
		})
	}
}

func TestOutputBudget(t *testing.T) {
	const image = "\n[image image/png, 4096 bytes]"
	tests := []struct {
		name      string
		origin    mcpbind.Origin
		operator  int // the operator's top-level max_output_tokens
		manager   int // ManagerOptions.MaxOutputTokens
		server    int // the server's max_output_tokens
		times     int // of "0123456789\n"
		wantBytes int // of the text before the note; 0: not cut
	}{
		{name: "the default fits 25,000 tokens", origin: mcpbind.OriginOperator, times: 9000},
		{name: "the default cuts past 25,000 tokens", origin: mcpbind.OriginOperator, times: 9100, wantBytes: 99_990},
		{name: "the operator's budget", origin: mcpbind.OriginOperator, operator: 100, times: 100, wantBytes: 396},
		{name: "the host's over the operator's", origin: mcpbind.OriginOperator, operator: 100, manager: 50, times: 100, wantBytes: 198},
		{name: "an operator server may raise it", origin: mcpbind.OriginOperator, operator: 100, server: 1000, times: 100},
		{name: "a workspace server may lower it", origin: mcpbind.OriginWorkspace, operator: 100, server: 10, times: 100, wantBytes: 40},
		{name: "a workspace server may not raise it", origin: mcpbind.OriginWorkspace, operator: 100, server: 1000, times: 100, wantBytes: 396},
		{name: "no budget", origin: mcpbind.OriginOperator, manager: -1, times: 10_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			cfg := &mcpbind.Config{MaxOutputTokens: tt.operator, Servers: []mcpbind.ServerConfig{
				{Name: "s", Command: "x", Origin: tt.origin, MaxOutputTokens: tt.server}}}
			cfg = trustAll(cfg)
			whole := strings.Repeat("0123456789\n", tt.times)
			got := bigCall(t, cfg, &mcpbind.ManagerOptions{MaxOutputTokens: tt.manager, OutputDir: dir}, "0123456789\n", tt.times)
			if tt.wantBytes == 0 {
				if got != whole+image {
					t.Errorf("result of %d bytes was changed", len(whole))
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("a result that fits was kept: %v", err)
				}
				return
			}
			// The text cut ends in a line break, then a blank line and the note.
			head, note, ok := strings.Cut(got, "\n[basis: ")
			want := whole[:tt.wantBytes]
			if !strings.HasSuffix(want, "\n") {
				want += "\n"
			}
			if !ok || head != want {
				t.Fatalf("cut to %d bytes (note %v), want the first %d", len(head), ok, tt.wantBytes)
			}
			m := keptAt.FindStringSubmatch(note)
			if m == nil || !strings.Contains(note, "1 token ≈ 4 bytes") || !strings.Contains(note, `MCP server s`) {
				t.Fatalf("note %q does not say what was cut and where the whole is", note)
			}
			kept, err := os.ReadFile(m[1])
			if err != nil {
				t.Fatal(err)
			}
			if string(kept) != whole+image {
				t.Errorf("kept %d bytes, want the whole %d", len(kept), len(whole+image))
			}
			for path, mode := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, m[1]: 0o600} {
				if fi, err := os.Lstat(path); err != nil || fi.Mode() != mode {
					t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, mode)
				}
			}
		})
	}
}

// trustAll marks a hand-made config's workspace servers as trusted, as
// Load would for a file the operator trusted.
func trustAll(cfg *mcpbind.Config) *mcpbind.Config {
	for i, s := range cfg.Servers {
		if s.Origin == mcpbind.OriginWorkspace {
			cfg.Servers[i].File = "/ws/.mcp.json"
			cfg.Files = append(cfg.Files, mcpbind.ConfigFile{Path: "/ws/.mcp.json", Origin: mcpbind.OriginWorkspace, Trust: mcpbind.Trusted})
		}
	}
	return cfg
}

// A cut never splits a character, and ends on a line near the budget.
func TestOutputBudgetCutsWholeCharacters(t *testing.T) {
	cfg := &mcpbind.Config{Servers: []mcpbind.ServerConfig{{Name: "s", Command: "x", Origin: mcpbind.OriginOperator, MaxOutputTokens: 10}}}
	got := bigCall(t, cfg, &mcpbind.ManagerOptions{OutputDir: t.TempDir()}, "éé€", 100)
	head, _, _ := strings.Cut(got, "\n[basis: ")
	if diff := cmp.Diff(strings.Repeat("éé€", 5)+"éé\n", head); diff != "" {
		t.Errorf("head (-want +got):\n%s", diff)
	}
}

// A program that could write where results are kept could plant one, or
// point the directory elsewhere: a directory that is a link, or another
// user's, is refused, and the model is told the whole could not be kept
// (still cut).
func TestOutputDirRefusesWhatIsNotItsOwn(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		says  string
	}{
		{"a link", func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), dir); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory"},
		{"a file", func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory"},
		{"another user's", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory away")
			}
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "belongs to another user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			tt.setup(t, dir)
			cfg := &mcpbind.Config{Servers: []mcpbind.ServerConfig{{Name: "s", Command: "x", Origin: mcpbind.OriginOperator, MaxOutputTokens: 1}}}
			got := bigCall(t, cfg, &mcpbind.ManagerOptions{OutputDir: dir}, "x", 100)
			if !strings.HasPrefix(got, "xxxx\n\n[basis: ") || !strings.Contains(got, "the whole result could not be kept: ") || !strings.Contains(got, tt.says) {
				t.Errorf("result %q, want a cut that says %q", got, tt.says)
			}
		})
	}
}

// A directory left open to others is closed again before a result is
// written into it.
func TestOutputDirIsMadePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := &mcpbind.Config{Servers: []mcpbind.ServerConfig{{Name: "s", Command: "x", Origin: mcpbind.OriginOperator, MaxOutputTokens: 1}}}
	got := bigCall(t, cfg, &mcpbind.ManagerOptions{OutputDir: dir}, "x", 100)
	if keptAt.FindStringSubmatch(got) == nil {
		t.Fatalf("result %q keeps nothing", got)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil || st.Mode&0o777 != 0o700 {
		t.Errorf("directory mode %o (%v), want 0700", st.Mode&0o777, err)
	}
}
