package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// helperDir makes a directory holding an executable "basis" and a helper
// beside it, both this user's, and returns the path of basis.
func helperDir(t *testing.T) (exe string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, "basis")
	for _, f := range []string{exe, filepath.Join(dir, HelperName)} {
		if err := os.WriteFile(f, []byte("#!/bin/false\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return exe
}

// The helper beside the running binary is taken only when no one but
// that binary's owner (or root) could have put it there or changed it:
// each way an attacker would plant or reach one is refused.
func TestHelperBeside(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, exe, h string) error
		root   bool   // needs to give a file away
		why    string // what the error says, "" when the helper is taken
	}{
		{"as installed", func(*testing.T, string, string) error { return nil }, false, ""},
		{"missing", func(_ *testing.T, _, h string) error { return os.Remove(h) }, false, "no such file"},
		{"a link to a good helper", func(t *testing.T, _, h string) error {
			good := filepath.Join(t.TempDir(), HelperName)
			if err := os.Rename(h, good); err != nil {
				return err
			}
			return os.Symlink(good, h)
		}, false, "is not a regular file"},
		{"a second name (hard link)", func(t *testing.T, _, h string) error {
			return os.Link(h, filepath.Join(filepath.Dir(h), "other"))
		}, false, "has another name"},
		{"a directory", func(_ *testing.T, _, h string) error {
			if err := os.Remove(h); err != nil {
				return err
			}
			return os.Mkdir(h, 0o755)
		}, false, "is not a regular file"},
		{"a FIFO", func(_ *testing.T, _, h string) error {
			if err := os.Remove(h); err != nil {
				return err
			}
			return syscall.Mkfifo(h, 0o755)
		}, false, "is not a regular file"},
		{"group-writable", func(_ *testing.T, _, h string) error { return os.Chmod(h, 0o775) }, false, "may be written by its group or others"},
		{"writable by others", func(_ *testing.T, _, h string) error { return os.Chmod(h, 0o757) }, false, "may be written by its group or others"},
		{"not executable", func(_ *testing.T, _, h string) error { return os.Chmod(h, 0o644) }, false, "is not executable"},
		{"set-user-ID", func(_ *testing.T, _, h string) error { return os.Chmod(h, 0o755|os.ModeSetuid) }, false, "set-user-ID"},
		{"set-group-ID", func(_ *testing.T, _, h string) error { return os.Chmod(h, 0o755|os.ModeSetgid) }, false, "set-group-ID"},
		{"its directory group-writable", func(_ *testing.T, _, h string) error { return os.Chmod(filepath.Dir(h), 0o775) }, false, "may be written by its group or others"},
		{"its directory writable by all, sticky", func(_ *testing.T, _, h string) error {
			return os.Chmod(filepath.Dir(h), 0o777|os.ModeSticky)
		}, false, ""},
		{"the binary is the helper", nil, false, "file does not exist"},
		{"another user's", func(_ *testing.T, _, h string) error { return os.Chown(h, 65534, 65534) }, true, "is owned by uid 65534"},
		{"its directory another user's", func(_ *testing.T, _, h string) error {
			return os.Chown(filepath.Dir(h), 65534, 65534)
		}, true, "is owned by uid 65534"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			exe := helperDir(t)
			h := filepath.Join(filepath.Dir(exe), HelperName)
			if tc.change == nil {
				exe = h
			} else if err := tc.change(t, exe, h); err != nil {
				t.Fatal(err)
			}
			got, err := helperBeside(exe)
			if (got != nil) != (tc.why == "") || (err == nil) != (tc.why == "") {
				t.Fatalf("helperBeside = %+v, %v; want a helper: %v", got, err, tc.why == "")
			}
			if got != nil && got.path != h {
				t.Errorf("helperBeside found %s, want %s", got.path, h)
			}
			if err != nil && !strings.Contains(err.Error(), tc.why) {
				t.Errorf("helperBeside says %q, want it to say %q", err, tc.why)
			}
			if missing := tc.why == "no such file" || tc.why == "file does not exist"; err != nil && errors.Is(err, fs.ErrNotExist) != missing {
				t.Errorf("helperBeside: %v; errors.Is(fs.ErrNotExist) = %v, want %v", err, !missing, missing)
			}
		})
	}
}

// A call that may write the helper, or a directory above it, by any name,
// is not started by it: its program could change what the next call
// runs before it is confined. Nor is a helper that changed since the
// probe.
func TestHelperWritableByTheCall(t *testing.T) {
	exe := helperDir(t)
	h, err := helperBeside(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(exe)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		write []string
		want  bool
	}{
		{"elsewhere", []string{t.TempDir()}, false},
		{"nothing", nil, false},
		{"a missing path", []string{filepath.Join(dir, "missing")}, false},
		{"its directory", []string{t.TempDir(), dir}, true},
		{"its directory through a link", []string{link}, true},
		{"the file itself", []string{h.path}, true},
		{"a directory above", []string{filepath.Dir(dir)}, true},
	} {
		if got := h.writableBy(tc.write); got != tc.want {
			t.Errorf("%s: writableBy = %v, want %v", tc.name, got, tc.want)
		}
	}
	old := sandboxHelper
	t.Cleanup(func() { sandboxHelper = old })
	sandboxHelper = func() (*helper, error) { return h, nil }
	for _, tc := range []struct {
		name  string
		sup   support
		write []string
		want  string
	}{
		{"the probe found it works", support{helper: true}, []string{t.TempDir()}, h.path},
		{"the probe did not", support{}, []string{t.TempDir()}, selfPath},
		{"the call may write it", support{helper: true}, []string{dir}, selfPath},
	} {
		if got := trampolinePath(tc.sup, tc.write); got != tc.want {
			t.Errorf("%s: trampolinePath = %s, want %s", tc.name, got, tc.want)
		}
	}
	// Reinstalled since the probe (a newer basis's, say, under a process
	// that runs on): not started, whether written in place or replaced.
	if err := os.WriteFile(h.path, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := trampolinePath(support{helper: true}, nil); got != selfPath {
		t.Errorf("written since the probe: trampolinePath = %s, want %s", got, selfPath)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(h.path, &st); err != nil {
		t.Fatal(err)
	}
	h.id = identity(&st) // as if the probe had asked this one
	if got := trampolinePath(support{helper: true}, nil); got != h.path {
		t.Fatalf("the file the probe asked: trampolinePath = %s, want %s", got, h.path)
	}
	replaced := filepath.Join(dir, "new")
	if err := os.WriteFile(replaced, []byte("#!/bin/false\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(replaced, h.path); err != nil {
		t.Fatal(err)
	}
	if got := trampolinePath(support{helper: true}, nil); got != selfPath {
		t.Errorf("replaced since the probe: trampolinePath = %s, want %s", got, selfPath)
	}
	sandboxHelper = func() (*helper, error) { return nil, fs.ErrNotExist }
	if got := trampolinePath(support{helper: true}, nil); got != selfPath {
		t.Errorf("no helper any more: trampolinePath = %s, want %s", got, selfPath)
	}
}

// The probe asks the helper first and the running binary when the helper
// fails (one of another build refuses): either success is remembered with
// which of the two made it, and a helper that changed is asked again.
func TestProbeTriesTheHelperFirst(t *testing.T) {
	if !mainCalled.Load() {
		t.Skip("no trampoline in this binary")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	h := &helper{path: "/installed/" + HelperName, id: []int64{1, 2, 3, 4, 5, 6, 7}}
	old := sandboxHelper
	t.Cleanup(func() { sandboxHelper = old; probeTrampolineFunc = probeTrampoline })
	sandboxHelper = func() (*helper, error) { return h, nil }
	type ask struct {
		path   string
		userns bool
	}
	var asked []ask
	helperWorks := false
	probeTrampolineFunc = func(path string, userns bool) error {
		asked = append(asked, ask{path, userns})
		if !userns || path == h.path && !helperWorks {
			return errors.New("refused")
		}
		return nil
	}
	run := func() support {
		var s support
		probeUserns(&s)
		return s
	}
	var want []ask
	if os.Geteuid() == 0 {
		want = []ask{{h.path, false}, {selfPath, false}}
	}
	want = append(want, ask{h.path, true}, ask{selfPath, true})
	if s := run(); !s.userns || s.helper || !slices.Equal(asked, want) {
		t.Fatalf("a refusing helper: %+v after asking %v, want the binary after asking %v", s, asked, want)
	}
	asked = nil
	if s := run(); !s.userns || s.helper || len(asked) != 0 {
		t.Fatalf("the next process: %+v after asking %v, want the remembered binary", s, asked)
	}
	// A helper installed again is another file: asked again, and taken.
	h.id[1]++
	helperWorks = true
	asked = nil
	if s := run(); !s.userns || !s.helper || asked[len(asked)-1] != (ask{h.path, true}) {
		t.Fatalf("a working helper: %+v after asking %v", s, asked)
	}
	asked = nil
	if s := run(); !s.helper || len(asked) != 0 {
		t.Fatalf("the next process: %+v after asking %v, want the remembered helper", s, asked)
	}
	// Gone: another key, asked again, and the binary made them.
	sandboxHelper = func() (*helper, error) { return nil, fs.ErrNotExist }
	asked = nil
	want = slices.DeleteFunc(want, func(a ask) bool { return a.path == h.path })
	if s := run(); !s.userns || s.helper || !slices.Equal(asked, want) {
		t.Errorf("no helper: %+v after asking %v", s, asked)
	}
}
