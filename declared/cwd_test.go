//go:build unix

package declared_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// cwdWorkspace is a workspace at base/home/repo, with base/outside
// beside it, and a tool "t" whose cwd is cwd, if any, and whose program
// prints the directory it runs in and leaves a mark, so a test can tell
// whether it ran.
type cwdWorkspace struct {
	base, root, outside, mark string
}

func newCWDWorkspace(t *testing.T, cwd string, global bool) (*cwdWorkspace, *declared.Options) {
	t.Helper()
	base := t.TempDir()
	w := &cwdWorkspace{base: base, root: filepath.Join(base, "home", "repo"), outside: filepath.Join(base, "canary-outside"), mark: filepath.Join(base, "ran")}
	for _, d := range []string{w.root, w.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	program := script(t, w.root, ".basis/tools/where", `pwd -P; touch "`+w.mark+`"`)
	tool := map[string]any{"description": "d", "input_schema": map[string]any{"type": "object"}, "command": []string{program}}
	if cwd != "" {
		tool["cwd"] = cwd
	}
	manifest := manifestOf(t, map[string]any{"t": tool})
	cfg := &declared.Options{Environ: append(pathEnv(), "HOME="+w.outside, "SUB=sub")}
	if global {
		cfg.ConfigDir = filepath.Join(base, "config")
		writeFile(t, cfg.ConfigDir, declared.GlobalFile, manifest, 0o644)
	} else {
		writeFile(t, w.root, declared.WorkspaceFile, manifest, 0o644)
	}
	return w, cfg
}

func (w *cwdWorkspace) ran() bool { return fileExists(w.mark) }

func (w *cwdWorkspace) symlink(t *testing.T, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(w.root, rel)); err != nil {
		t.Fatal(err)
	}
}

// checkOutside checks err refuses the tool for a cwd outside the
// workspace, naming the manifest, the tool and the field and quoting no
// path.
func checkOutside(t *testing.T, what string, err error, w *cwdWorkspace) {
	t.Helper()
	var ue *declared.UnavailableError
	switch {
	case err == nil:
		t.Errorf("%s: no error, want the tool unavailable for its cwd", what)
		return
	case !errors.As(err, &ue) || !errors.Is(err, declared.ErrOutsideWorkspace) || !errors.Is(err, declared.ErrUnavailable) || !errors.Is(err, contract.ErrRefused):
		t.Errorf("%s: %v (%T) does not wrap what it promises", what, err, err)
		return
	}
	manifest := filepath.Join(w.root, declared.WorkspaceFile)
	msg := err.Error()
	if !strings.HasPrefix(msg, "t is unavailable: its cwd ("+manifest+":") || !strings.Contains(msg, "leads outside the workspace") {
		t.Errorf("%s: message %q does not name the tool, field and file", what, msg)
	}
	for _, value := range []string{w.outside, "canary", "/etc", "../"} {
		if strings.Contains(msg, value) {
			t.Errorf("%s: message %q quotes the value (%s)", what, msg, value)
		}
	}
	if len(ue.Problems) != 1 || ue.Problems[0].Field != "cwd" || toolOf(ue.Problems[0]) != "t" || ue.Problems[0].File != manifest || ue.Problems[0].Line == 0 {
		t.Errorf("%s: problems = %+v", what, ue.Problems)
	}
}

// A workspace manifest's cwd must lead into the workspace: every way out
// makes the tool unavailable at load — listed, refused naming the field,
// its program never started — and `basis check` reports it.
func TestWorkspaceCwdOutsideIsUnavailable(t *testing.T) {
	tests := []struct {
		name  string
		cwd   string
		setup func(t *testing.T, w *cwdWorkspace)
	}{
		{name: "dot-dot", cwd: "../../canary-outside"},
		{name: "dot-dot to /etc", cwd: "../../../../../../../../../../etc"},
		{name: "absolute path outside", cwd: "$OUTSIDE"},
		{name: "a link in the workspace pointing out", cwd: "link", setup: func(t *testing.T, w *cwdWorkspace) { w.symlink(t, w.outside, "link") }},
		{name: "a relative link pointing out", cwd: "link/.", setup: func(t *testing.T, w *cwdWorkspace) { w.symlink(t, "../../canary-outside", "link") }},
		{name: "through a link, then up", cwd: "in/../../..", setup: func(t *testing.T, w *cwdWorkspace) {
			os.MkdirAll(filepath.Join(w.root, "a", "b"), 0o755)
			w.symlink(t, "a/b", "in")
		}},
		{name: "HOME placeholder expanding outside", cwd: "${HOME}"},
		{name: "a missing directory under a link out", cwd: "link/missing", setup: func(t *testing.T, w *cwdWorkspace) { w.symlink(t, w.outside, "link") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe, _ := newCWDWorkspace(t, "", false)
			cwd := strings.ReplaceAll(tt.cwd, "$OUTSIDE", probe.outside)
			w, cfg := newCWDWorkspace(t, cwd, false)
			if tt.setup != nil {
				tt.setup(t, w)
			}
			tool := loadTool(t, w.root, cfg, "t")
			checkOutside(t, "Unavailable", tool.Unavailable(), w)
			_, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
			checkOutside(t, "preview", err, w)
			_, err = tool.Execute(t.Context(), callWith(`{}`))
			checkOutside(t, "Execute", err, w)
			checkOutside(t, "CheckStart", tool.CheckStart(), w)
			if w.ran() {
				t.Error("the program ran")
			}
		})
	}
}

// The operator's own tools.json may name any directory, and a workspace
// cwd that stays inside — through a link, too — works, the program
// starting in the real directory.
func TestCwdThatMayBeUsed(t *testing.T) {
	tests := []struct {
		name   string
		cwd    string
		global bool
		setup  func(t *testing.T, w *cwdWorkspace)
		want   string // the directory the program runs in; $ROOT, $OUTSIDE
	}{
		{name: "operator: dot-dot", cwd: "../../canary-outside", global: true, want: "$OUTSIDE"},
		{name: "operator: HOME placeholder", cwd: "${HOME}", global: true, want: "$OUTSIDE"},
		{name: "operator: a link out", cwd: "link", global: true, want: "$OUTSIDE",
			setup: func(t *testing.T, w *cwdWorkspace) { w.symlink(t, w.outside, "link") }},
		{name: "workspace: the root", cwd: ".", want: "$ROOT"},
		{name: "workspace: none", want: "$ROOT"},
		{name: "workspace: a subdirectory by placeholder", cwd: "${SUB}", want: "$ROOT/sub",
			setup: func(t *testing.T, w *cwdWorkspace) { os.Mkdir(filepath.Join(w.root, "sub"), 0o755) }},
		{name: "workspace: a link that stays inside", cwd: "in", want: "$ROOT/sub",
			setup: func(t *testing.T, w *cwdWorkspace) {
				os.Mkdir(filepath.Join(w.root, "sub"), 0o755)
				w.symlink(t, "sub", "in")
			}},
		{name: "workspace: up and back in", cwd: "../repo/sub", want: "$ROOT/sub",
			setup: func(t *testing.T, w *cwdWorkspace) { os.Mkdir(filepath.Join(w.root, "sub"), 0o755) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, cfg := newCWDWorkspace(t, tt.cwd, tt.global)
			if tt.setup != nil {
				tt.setup(t, w)
			}
			tool := loadTool(t, w.root, cfg, "t")
			if err := tool.Unavailable(); err != nil {
				t.Fatal(err)
			}
			if err := tool.CheckStart(); err != nil {
				t.Fatal(err)
			}
			if _, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`)); err != nil {
				t.Fatal(err)
			}
			res, err := tool.Execute(t.Context(), callWith(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			root, _ := filepath.EvalSymlinks(w.root)
			outside, _ := filepath.EvalSymlinks(w.outside)
			want := strings.NewReplacer("$ROOT", root, "$OUTSIDE", outside).Replace(tt.want)
			if got := strings.TrimSpace(res.Text); got != want {
				t.Errorf("the program ran in %s, want %s", got, want)
			}
		})
	}
}

// A program the sandbox lets write in the workspace can plant a link
// where a tool's cwd is, after the tool was loaded: between two calls,
// or between a call's preview and its run. The cwd is resolved again at
// each preview and each Execute, and a cwd that now leads out is refused
// then; nothing runs.
func TestWorkspaceCwdSwappedForALinkIsRefused(t *testing.T) {
	swap := func(t *testing.T, w *cwdWorkspace) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(w.root, "work")); err != nil {
			t.Fatal(err)
		}
		w.symlink(t, w.outside, "work")
	}
	t.Run("after load", func(t *testing.T) {
		w, cfg := newCWDWorkspace(t, "work", false)
		os.Mkdir(filepath.Join(w.root, "work"), 0o755)
		tool := loadTool(t, w.root, cfg, "t")
		if err := tool.Unavailable(); err != nil {
			t.Fatal(err)
		}
		swap(t, w)
		_, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
		checkOutside(t, "preview", err, w)
		_, err = tool.Execute(t.Context(), callWith(`{}`))
		checkOutside(t, "Execute", err, w)
		checkOutside(t, "CheckStart", tool.CheckStart(), w)
		if w.ran() {
			t.Error("the program ran")
		}
	})
	t.Run("between the preview and the run", func(t *testing.T) {
		w, cfg := newCWDWorkspace(t, "work", false)
		os.Mkdir(filepath.Join(w.root, "work"), 0o755)
		tool := loadTool(t, w.root, cfg, "t")
		if _, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`)); err != nil {
			t.Fatal(err)
		}
		swap(t, w)
		_, err := tool.Execute(t.Context(), callWith(`{}`))
		checkOutside(t, "Execute", err, w)
		if w.ran() {
			t.Error("the program ran")
		}
	})
	t.Run("missing at load, then a link", func(t *testing.T) {
		w, cfg := newCWDWorkspace(t, "work", false)
		tool := loadTool(t, w.root, cfg, "t")
		if err := tool.Unavailable(); err != nil {
			t.Fatalf("a missing cwd inside the workspace may be made later: %v", err)
		}
		w.symlink(t, w.outside, "work")
		_, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
		checkOutside(t, "preview", err, w)
		_, err = tool.Execute(t.Context(), callWith(`{}`))
		checkOutside(t, "Execute", err, w)
		if w.ran() {
			t.Error("the program ran")
		}
	})
}

// A workspace cwd that does not exist is not judged at load (a build may
// make it), but no call runs in it: the preview refuses (there is no
// directory to vouch for) and Execute does, naming the field, not the
// path.
func TestWorkspaceCwdMissing(t *testing.T) {
	w, cfg := newCWDWorkspace(t, "build/${SUB}", false)
	tool := loadTool(t, w.root, cfg, "t")
	if err := tool.Unavailable(); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(w.root, declared.WorkspaceFile)
	_, err := tool.AuthorizationPreview(t.Context(), callWith(`{}`))
	if err == nil || !errors.Is(err, contract.ErrRefused) || !errors.Is(err, declared.ErrCannotStart) || !errors.Is(err, os.ErrNotExist) ||
		errors.Is(err, declared.ErrOutsideWorkspace) {
		t.Errorf("preview: %v", err)
	} else if want := "t cannot run: its working directory (cwd, " + manifest + ":8:14) does not exist; create it, or change cwd in " + manifest; err.Error() != want {
		t.Errorf("preview: %q, want %q", err, want)
	}
	_, err = tool.Execute(t.Context(), callWith(`{}`))
	var re *declared.RunError
	if !errors.As(err, &re) || !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "build/sub") {
		t.Errorf("Execute: %v", err)
	}
	if err := tool.CheckStart(); !errors.Is(err, declared.ErrCannotStart) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckStart: %v", err)
	}
	if w.ran() {
		t.Error("the program ran")
	}
	// Made inside, it works.
	if err := os.MkdirAll(filepath.Join(w.root, "build", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Execute(t.Context(), callWith(`{}`)); err != nil || !w.ran() {
		t.Errorf("once made: %v", err)
	}
}

// LoadFile holds a file to the workspace's rule unless it is the
// operator's own tools.json.
func TestLoadFileCwdRule(t *testing.T) {
	w, cfg := newCWDWorkspace(t, "../../canary-outside", true)
	global := filepath.Join(cfg.ConfigDir, declared.GlobalFile)
	tools, err := declared.LoadFile(t.Context(), w.root, global, cfg)
	if err != nil || len(tools) != 1 || tools[0].Unavailable() != nil {
		t.Fatalf("the operator's file: %v, %v", tools, err)
	}
	other := filepath.Join(w.base, "elsewhere.json")
	data, err := os.ReadFile(global)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.base, "elsewhere.json", string(data), 0o644)
	tools, err = declared.LoadFile(t.Context(), w.root, other, cfg)
	if err != nil || len(tools) != 1 || !errors.Is(tools[0].Unavailable(), declared.ErrOutsideWorkspace) {
		t.Fatalf("another file: %v, %v", tools, err)
	}
}
