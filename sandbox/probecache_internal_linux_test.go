package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// The key of a remembered probe changes with each thing that could
// change the probe's answer while the binary stays the same, and names
// nothing when what it reads cannot be read.
func TestProbeKeyChangesWithWhatDecidesIt(t *testing.T) {
	files := map[string]string{"/proc/self/status": "Name:\tx\nSeccomp:\t0\nSeccomp_filters:\t0\nNoNewPrivs:\t0\nThreads:\t3\n"}
	for _, f := range probeKeyFiles {
		files[f] = "value of " + f
	}
	links := map[string]string{}
	for _, l := range probeKeyLinks {
		links[l] = "ns of " + l
	}
	t.Cleanup(func() { readProbeFile, readProbeLink = os.ReadFile, os.Readlink })
	readProbeFile = func(name string) ([]byte, error) {
		if v, ok := files[name]; ok {
			return []byte(v), nil
		}
		return nil, os.ErrNotExist
	}
	readProbeLink = func(name string) (string, error) {
		if v, ok := links[name]; ok {
			return v, nil
		}
		return "", os.ErrNotExist
	}
	hp := &helper{id: []int64{1, 2, 3, 4, 5, 6, 7}}
	base := probeKey(hp)
	if base == "" {
		t.Fatal("no key from readable inputs")
	}
	changed := func(what string, change func(), restore func()) {
		t.Helper()
		change()
		if k := probeKey(hp); k == base {
			t.Errorf("the key does not change with %s", what)
		}
		restore()
		if k := probeKey(hp); k != base {
			t.Fatalf("the key did not come back after %s", what)
		}
	}
	for i := range hp.id {
		changed("the helper's identity, part "+strconv.Itoa(i), func() { hp.id[i]++ }, func() { hp.id[i]-- })
	}
	if probeKey(nil) == base {
		t.Errorf("the key does not change when the helper is gone")
	}
	for _, f := range probeKeyFiles {
		old := files[f]
		changed(f, func() { files[f] = old + "x" }, func() { files[f] = old })
		changed(f+" missing", func() { delete(files, f) }, func() { files[f] = old })
	}
	for _, l := range probeKeyLinks {
		old := links[l]
		changed(l, func() { links[l] = old + "x" }, func() { links[l] = old })
	}
	status := files["/proc/self/status"]
	for _, line := range []string{"Seccomp:\t2\n", "Seccomp_filters:\t1\n", "NoNewPrivs:\t1\n"} {
		changed("the status line "+line, func() { files["/proc/self/status"] = status + line }, func() { files["/proc/self/status"] = status })
	}
	files["/proc/self/status"] = status + "VmRSS:\t99 kB\n"
	if probeKey(hp) != base {
		t.Errorf("the key changes with a status line that does not decide the probe")
	}
	files["/proc/self/status"] = status
	delete(links, probeKeyLinks[0])
	if k := probeKey(hp); k != "" {
		t.Errorf("a namespace that cannot be read gives the key %q, want none", k)
	}
}

// A remembered probe is a regular file of this user's with one of four
// contents; anything else is not one, a FIFO included, which is not
// waited on. Remembering one removes the others.
func TestRememberedProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "probe")
	const k, old = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	if _, ok := rememberedProbe(dir, k); ok {
		t.Fatal("remembered before anything was")
	}
	rememberProbe(dir, old, probeResult{userns: true})
	rememberProbe(dir, k, probeResult{userns: true})
	if _, ok := rememberedProbe(dir, old); ok {
		t.Errorf("another key's record was kept")
	}
	for _, want := range []probeResult{{userns: true}, {}, {userns: true, helper: true}, {helper: true}} {
		rememberProbe(dir, k, want)
		if got, ok := rememberedProbe(dir, k); !ok || got != want {
			t.Errorf("after remembering %+v: %+v %v", want, got, ok)
		}
	}
	if _, ok := rememberedProbe("", k); ok {
		t.Errorf("remembered with no cache directory")
	}
	if _, ok := rememberedProbe(dir, ""); ok {
		t.Errorf("remembered with no key")
	}
	good := filepath.Join(dir, k)
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"a link to a good record", func(p string) error { return os.Symlink(good, p) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"other content", func(p string) error { return os.WriteFile(p, []byte("userns\n"), 0o600) }},
		{"a word too many", func(p string) error { return os.WriteFile(p, []byte("userns helper helper"), 0o600) }},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o600) }},
	} {
		if err := tc.make(filepath.Join(dir, tc.name)); err != nil {
			t.Fatal(err)
		}
		if _, ok := rememberedProbe(dir, tc.name); ok {
			t.Errorf("%s is taken for a remembered probe", tc.name)
		}
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		if err := os.WriteFile(other, []byte("userns"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, ok := rememberedProbe(dir, "other"); ok {
			t.Errorf("another user's record is taken for a remembered probe")
		}
	}
}

// probeUserns asks the trampoline once per key: a success is remembered
// and the next process goes by it; a failure is not, and the next
// process asks again.
func TestProbeUsernsRemembersOnlyASuccess(t *testing.T) {
	if !mainCalled.Load() {
		t.Skip("no trampoline in this binary")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var asked []bool
	works := map[bool]bool{}
	old := sandboxHelper
	t.Cleanup(func() { probeTrampolineFunc, sandboxHelper = probeTrampoline, old })
	sandboxHelper = func() (*helper, error) { return nil, os.ErrNotExist } // TestProbeTriesTheHelperFirst has one
	probeTrampolineFunc = func(path string, userns bool) error {
		if path != selfPath {
			t.Errorf("probed %s, want the running binary: there is no helper", path)
		}
		asked = append(asked, userns)
		if works[userns] {
			return nil
		}
		return errors.New("no namespaces")
	}
	attempts := []bool{true}
	if os.Geteuid() == 0 {
		attempts = []bool{false, true}
	}
	run := func() support {
		var s support
		probeUserns(&s)
		return s
	}
	if s := run(); s.netns || s.pidns {
		t.Fatalf("namespaces after a failed probe: %+v", s)
	}
	asked = nil
	if run(); !slices.Equal(asked, attempts) {
		t.Fatalf("after a failed probe the next asked %v, want %v: a failure was remembered", asked, attempts)
	}
	works[true] = true
	asked = nil
	if s := run(); !s.netns || !s.pidns || !s.userns {
		t.Fatalf("after a successful probe: %+v", s)
	}
	if len(asked) == 0 {
		t.Fatal("the trampoline was not asked")
	}
	asked = nil
	if s := run(); !s.netns || !s.pidns || !s.userns || len(asked) != 0 {
		t.Fatalf("the next process: %+v, asked %v; want the remembered success and no probe", s, asked)
	}
	// Something the key reads changed: asked again.
	t.Cleanup(func() { readProbeFile = os.ReadFile })
	readProbeFile = func(name string) ([]byte, error) {
		if name == "/proc/sys/user/max_user_namespaces" {
			return []byte("0\n"), nil
		}
		return os.ReadFile(name)
	}
	asked = nil
	if run(); len(asked) == 0 {
		t.Errorf("a changed key went by the remembered probe")
	}
}

// A program started through the trampoline that exits with
// ExitNotConfined forgets the probe the process went by: the namespaces
// it promised may not work any more. Any other exit keeps it.
func TestExitNotConfinedForgetsTheProbe(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, key := probeCacheDir(), "a-key"
	old := usedProbeKey.Load()
	t.Cleanup(func() { usedProbeKey.Store(old) })
	usedProbeKey.Store(&key)
	rememberProbe(dir, key, probeResult{userns: true})
	exit := func(code string) *os.ProcessState {
		cmd := exec.Command("/bin/sh", "-c", "exit "+code)
		_ = cmd.Run()
		return cmd.ProcessState
	}
	forgetProbeAfter(exit("0"))
	forgetProbeAfter(exit("1"))
	forgetProbeAfter(nil)
	if _, ok := rememberedProbe(dir, key); !ok {
		t.Fatal("forgotten after an exit other than ExitNotConfined")
	}
	forgetProbeAfter(exit("125"))
	if _, ok := rememberedProbe(dir, key); ok {
		t.Error("still remembered after ExitNotConfined")
	}
}

// Where the trampoline makes the namespaces (an unprivileged process,
// which TestUnprivileged runs this as), the next process's probe goes by
// the success the first one remembered, with the same answer, and without
// starting the trampoline.
func TestRememberedProbeGivesTheSameSupport(t *testing.T) {
	if probe().threadNetns || !mainCalled.Load() {
		t.Skip("the namespaces are made on a thread here, with no trampoline to probe; TestUnprivileged runs this as uid 65534")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	starts := 0
	t.Cleanup(func() { probeTrampolineFunc = probeTrampoline })
	probeTrampolineFunc = func(path string, userns bool) error {
		starts++
		return probeTrampoline(path, userns)
	}
	first := probeKernel()
	if starts == 0 || !first.netns {
		t.Fatalf("the first probe started the trampoline %d times and found %+v", starts, first)
	}
	starts = 0
	if next := probeKernel(); next != first || starts != 0 {
		t.Errorf("the next probe: %+v after %d starts, want %+v after none", next, starts, first)
	}
}

// Remembering a probe removes the records of other keys and nothing
// else, also when the directory was made a link to another one: a file
// there keeps its place unless it is a record.
func TestRememberingRemovesOnlyRecords(t *testing.T) {
	elsewhere := t.TempDir()
	keep := map[string]string{
		"notes.txt":                        "userns",    // a record's content, another name
		"0123456789abcdef0123456789abcdef": "precious",  // a key's name, other content
		"fedcba9876543210fedcba987654321":  "userns",    // 31 digits
		"FEDCBA9876543210FEDCBA9876543210": "no-userns", // upper case
	}
	for name, content := range keep {
		if err := os.WriteFile(filepath.Join(elsewhere, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const stale = "00000000000000000000000000000000"
	if err := os.WriteFile(filepath.Join(elsewhere, stale), []byte("no-userns"), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	dir := filepath.Join(cache, "probe")
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	rememberProbe(dir, "11111111111111111111111111111111", probeResult{userns: true})
	for name, content := range keep {
		if got, err := os.ReadFile(filepath.Join(elsewhere, name)); err != nil || string(got) != content {
			t.Errorf("%s: %q, %v; want it kept as %q", name, got, err, content)
		}
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, stale)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stale record was kept: %v", err)
	}
}
