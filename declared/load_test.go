//go:build unix

package declared_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/declared"
	"github.com/google/go-cmp/cmp"
)

// simpleTool is a valid tool whose description marks where it came from.
func simpleTool(from string) map[string]any {
	return map[string]any{
		"description":  "declared in " + from,
		"input_schema": map[string]any{"type": "object"},
		"command":      []string{"/bin/cat"},
	}
}

func TestDiscover(t *testing.T) {
	manifest := `{"schema": 1, "tools": {}}`
	tests := []struct {
		name  string
		setup func(t *testing.T, root, config string)
		want  []string // relative to the temp dir: "ws" or "config"
	}{
		{"nothing", func(*testing.T, string, string) {}, nil},
		{"workspace only", func(t *testing.T, root, _ string) {
			writeFile(t, root, declared.WorkspaceFile, manifest, 0o644)
		}, []string{"ws"}},
		{"global only", func(t *testing.T, _, config string) {
			writeFile(t, config, declared.GlobalFile, manifest, 0o644)
		}, []string{"config"}},
		{"both, workspace first", func(t *testing.T, root, config string) {
			writeFile(t, config, declared.GlobalFile, manifest, 0o644)
			writeFile(t, root, declared.WorkspaceFile, manifest, 0o644)
		}, []string{"ws", "config"}},
		{"a directory where the file would be is ignored", func(t *testing.T, root, config string) {
			if err := os.MkdirAll(filepath.Join(root, declared.WorkspaceFile), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, config, declared.GlobalFile, manifest, 0o644)
		}, []string{"config"}},
		{"the global file is a link to the workspace file: read once", func(t *testing.T, root, config string) {
			ws := writeFile(t, root, declared.WorkspaceFile, manifest, 0o644)
			if err := os.MkdirAll(config, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(ws, filepath.Join(config, declared.GlobalFile)); err != nil {
				t.Fatal(err)
			}
		}, []string{"ws"}},
		{".basis is a file, not a directory", func(t *testing.T, root, _ string) {
			writeFile(t, root, ".basis", "not a directory", 0o644)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root, config := filepath.Join(dir, "ws"), filepath.Join(dir, "config")
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, root, config)
			got, err := declared.Discover(root, &declared.Options{ConfigDir: config})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.want {
				if w == "ws" {
					want = append(want, filepath.Join(root, declared.WorkspaceFile))
				} else {
					want = append(want, filepath.Join(config, declared.GlobalFile))
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Discover (-want +got):\n%s", diff)
			}
		})
	}
}

// The config directory may be the workspace's own .basis: the same path
// reached twice is one manifest, and its tools are loaded once.
func TestDiscoverSamePathOnce(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{"one": simpleTool("ws")}))
	cfg := &declared.Options{ConfigDir: filepath.Join(root, ".basis"), Environ: pathEnv()}
	paths, err := declared.Discover(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(root, declared.WorkspaceFile)}, paths); diff != "" {
		t.Errorf("Discover (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"one"}, names(loadTools(t, root, cfg))); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestDiscoverDanglingLinkIsAnError(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".basis"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere.json"), filepath.Join(root, declared.WorkspaceFile)); err != nil {
		t.Fatal(err)
	}
	_, err := declared.Discover(root, nil)
	problems := problemsOf(t, err)
	if len(problems) != 1 || !errors.Is(err, declared.ErrUnreadable) || problems[0].File != filepath.Join(root, declared.WorkspaceFile) {
		t.Fatalf("Discover = %v, want one ErrUnreadable naming the link", err)
	}
	if _, err := declared.Load(t.Context(), root, nil); !errors.Is(err, declared.ErrUnreadable) {
		t.Errorf("Load = %v, want ErrUnreadable", err)
	}
}

func TestLoadLayering(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"zeta":   simpleTool("ws"),
		"shared": simpleTool("ws"),
		"alpha":  simpleTool("ws"),
	}))
	config := t.TempDir()
	writeFile(t, config, declared.GlobalFile, manifestOf(t, map[string]any{
		"shared": simpleTool("global"),
		"beta":   simpleTool("global"),
		"aaa":    simpleTool("global"),
	}), 0o644)
	tools := loadTools(t, root, &declared.Options{ConfigDir: config, Environ: pathEnv()})

	// Workspace first, name-ordered; then the global ones, name-ordered;
	// the global "shared" is shadowed by the workspace's.
	if diff := cmp.Diff([]string{"alpha", "shared", "zeta", "aaa", "beta"}, names(tools)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	for _, tool := range tools {
		d := tool.Descriptor()
		wantFrom, wantSource := "ws", filepath.Join(root, declared.WorkspaceFile)
		if d.Name == "aaa" || d.Name == "beta" {
			wantFrom, wantSource = "global", filepath.Join(config, declared.GlobalFile)
		}
		if d.Description != "declared in "+wantFrom || d.Source != wantSource {
			t.Errorf("%s: description %q, source %q; want from %s (%s)", d.Name, d.Description, d.Source, wantFrom, wantSource)
		}
	}
}

func TestLoadNothingDeclared(t *testing.T) {
	tools, err := declared.Load(t.Context(), t.TempDir(), &declared.Options{ConfigDir: t.TempDir()})
	if err != nil || len(tools) != 0 {
		t.Errorf("Load with no manifests = %v, %v; want no tools and no error", names(tools), err)
	}
	tools, err = declared.Load(t.Context(), "", nil)
	if err != nil {
		t.Errorf("Load(nil) = %v, %v", names(tools), err)
	}
}

// Both files are read and both files' problems are reported; any problem
// means no tools at all, never a shorter list.
func TestLoadReportsEveryFile(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"good": simpleTool("ws"),
		"bad":  map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{}},
	}))
	config := t.TempDir()
	writeFile(t, config, declared.GlobalFile, `{"schema": 1, "tools": {"g": {"descripton": "x"}}}`, 0o644)
	tools, err := declared.Load(t.Context(), root, &declared.Options{ConfigDir: config, Environ: pathEnv()})
	if tools != nil {
		t.Errorf("Load returned tools %v alongside problems", names(tools))
	}
	type where struct{ File, Tool, Field string }
	var got []where
	for _, p := range problemsOf(t, err) {
		got = append(got, where{filepath.Base(filepath.Dir(p.File)) + "/" + filepath.Base(p.File), toolOf(p), p.Field})
	}
	want := []where{
		{".basis/tools.json", "bad", "command"},
		// Missing fields are located at the tool's name, before its keys.
		{filepath.Base(config) + "/tools.json", "g", "description"},
		{filepath.Base(config) + "/tools.json", "g", "input_schema"},
		{filepath.Base(config) + "/tools.json", "g", "command"},
		{filepath.Base(config) + "/tools.json", "g", "descripton"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "custom.json", manifestOf(t, map[string]any{"b": simpleTool("f"), "a": simpleTool("f")}), 0o644)
	tools, err := declared.LoadFile(t.Context(), dir, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names(tools)); diff != "" {
		t.Errorf("LoadFile names (-want +got):\n%s", diff)
	}
	if got := tools[0].Descriptor().Source; got != path {
		t.Errorf("source = %q, want %q", got, path)
	}

	_, err = declared.LoadFile(t.Context(), dir, filepath.Join(dir, "missing.json"), nil)
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, declared.ErrUnreadable) {
		t.Errorf("LoadFile of a missing file = %v, want fs.ErrNotExist and ErrUnreadable", err)
	}
}

// A manifest basis cannot use safely is refused with a message naming
// the file and what is wrong, without reading it: a named pipe (opening it
// would wait for a writer forever), a link to /dev/zero (reading it would
// never end), a file far larger than any manifest.
func TestLoadRefusesHostileFiles(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		says  string
		is    error
		// loadIs is what Load says, when it differs: a link out of the
		// workspace is refused for that before it is read.
		loadIs error
	}{
		{"named pipe", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skip("cannot make a named pipe:", err)
			}
		}, "is not a regular file (it is a named pipe); a manifest must be one", configfile.ErrNotRegular, nil},
		{"link to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file (it is a character device); a manifest must be one", configfile.ErrNotRegular, declared.ErrOutsideWorkspace},
		{"directory given to LoadFile", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file (it is a directory); a manifest must be one", configfile.ErrNotRegular, nil},
		{"too large", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// Sparse: the size is what is checked, and nothing is read.
			if err := f.Truncate(declared.MaxManifestSize + 1); err != nil {
				t.Fatal(err)
			}
		}, "is larger than 16 MiB, far more than any manifest; is it the right file?", configfile.ErrTooLarge, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, ".basis"), 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, declared.WorkspaceFile)
			tt.plant(t, path)
			done := make(chan error, 1)
			go func() {
				_, err := declared.LoadFile(t.Context(), root, path, nil)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("LoadFile blocked")
			}
			problems := problemsOf(t, err)
			if len(problems) != 1 || !errors.Is(err, declared.ErrUnreadable) || !errors.Is(err, tt.is) {
				t.Fatalf("LoadFile = %v, want one ErrUnreadable wrapping %v", err, tt.is)
			}
			if want := path + ": " + tt.says; problems[0].Error() != want {
				t.Errorf("message = %q, want %q", problems[0].Error(), want)
			}
			// Load finds the same file where the workspace manifest lives;
			// a directory there is no manifest at all.
			if tt.name != "directory given to LoadFile" {
				want := tt.is
				if tt.loadIs != nil {
					want = tt.loadIs
				}
				if _, err := declared.Load(t.Context(), root, nil); !errors.Is(err, want) {
					t.Errorf("Load = %v, want %v", err, want)
				}
			}
		})
	}
}

// Reading honours cancellation: a cancelled load reads nothing and says
// why.
func TestLoadHonoursCancellation(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{"one": simpleTool("ws")}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tools, err := declared.Load(ctx, root, nil)
	if tools != nil || !errors.Is(err, context.Canceled) || !errors.Is(err, declared.ErrUnreadable) {
		t.Errorf("Load with a cancelled context = %v, %v; want context.Canceled", names(tools), err)
	}
}

func TestLoadUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	root := workspace(t, `{"schema": 1, "tools": {}}`)
	path := filepath.Join(root, declared.WorkspaceFile)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err := declared.Load(t.Context(), root, nil)
	if !errors.Is(err, declared.ErrUnreadable) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Load = %v, want ErrUnreadable and fs.ErrPermission", err)
	}
}

func TestReservedNames(t *testing.T) {
	root := workspace(t, manifestOf(t, map[string]any{
		"spawn":           simpleTool("ws"),
		"mcp__github__pr": simpleTool("ws"),
		"read_file":       simpleTool("ws"),
		"fine":            simpleTool("ws"),
	}))
	_, err := declared.Load(t.Context(), root, &declared.Options{Reserved: []string{"spawn", "read_file"}})
	var got []string
	for _, p := range problemsOf(t, err) {
		if !errors.Is(p, declared.ErrReservedName) || p.File != filepath.Join(root, declared.WorkspaceFile) {
			t.Errorf("problem %v: want ErrReservedName naming the file", p)
		}
		got = append(got, toolOf(p))
	}
	if diff := cmp.Diff([]string{"mcp__github__pr", "read_file", "spawn"}, got); diff != "" {
		t.Errorf("reserved tools refused (-want +got):\n%s", diff)
	}
}

// The root is made absolute at load: a workspace opened by a relative
// path still runs its ./ programs after the process changes directory.
func TestRelativeRootMadeAbsolute(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "repo")
	writeFile(t, root, declared.WorkspaceFile, manifestOf(t, map[string]any{
		"where": map[string]any{
			"description":  "print the working directory",
			"input_schema": map[string]any{"type": "object"},
			"command":      []string{"./.basis/tools/where"},
		},
	}), 0o644)
	script(t, root, ".basis/tools/where", "pwd")
	t.Chdir(parent)
	tool := loadTool(t, "repo", &declared.Options{Environ: pathEnv()}, "where")
	if got := tool.Spec().Root; got != root {
		t.Errorf("Spec().Root = %q, want %q", got, root)
	}
	t.Chdir(t.TempDir())
	res, err := tool.Execute(t.Context(), callWith(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != root {
		t.Errorf("ran in %q, want %q", res.Text, root)
	}
}

// A large manifest is read concurrently; the result is the same as
// reading it in order: tools by name, problems in file order.
func TestLoadManyTools(t *testing.T) {
	tools := map[string]any{}
	for i := range 300 {
		tool := simpleTool("ws")
		tool["command"] = []string{"./x", fmt.Sprintf("${ARG_%d:-%d}", i, i)}
		if i%25 == 0 {
			tool["timeout_ms"] = 0
		}
		tools[fmt.Sprintf("tool_%03d", i)] = tool
	}
	root := workspace(t, manifestOf(t, tools))
	_, err := declared.Load(t.Context(), root, nil)
	var got []string
	lastLine := 0
	for _, p := range problemsOf(t, err) {
		if p.Field != "timeout_ms" || p.Line < lastLine {
			t.Errorf("unexpected or out-of-order problem: %v", p)
		}
		lastLine = p.Line
		got = append(got, toolOf(p))
	}
	var want []string
	for i := 0; i < 300; i += 25 {
		want = append(want, fmt.Sprintf("tool_%03d", i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools with problems (-want +got):\n%s", diff)
	}

	for i := 0; i < 300; i += 25 {
		delete(tools[fmt.Sprintf("tool_%03d", i)].(map[string]any), "timeout_ms")
	}
	root = workspace(t, manifestOf(t, tools))
	loaded := loadTools(t, root, &declared.Options{Environ: []string{"ARG_7=seven"}})
	if len(loaded) != 300 {
		t.Fatalf("loaded %d tools, want 300", len(loaded))
	}
	for i, tool := range loaded {
		if name := tool.Descriptor().Name; name != fmt.Sprintf("tool_%03d", i) {
			t.Fatalf("tool %d is %s: not in name order", i, name)
		}
	}
}
