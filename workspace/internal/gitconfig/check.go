package gitconfig

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/basis-go/basis/configfile"
)

// Bounds on what Check reads: a repository's files are the repository's
// to make huge, circular or deep.
const (
	// MaxConfigSize bounds one config file; real ones are a few
	// kilobytes.
	MaxConfigSize = 1 << 20
	// maxPointerSize bounds a .git file or a worktree's commondir file
	// (git itself refuses a .git file over 4 × PATH_MAX).
	maxPointerSize = 16 << 10
	// MaxIncludeDepth is git's own bound on nested includes.
	MaxIncludeDepth = 10
	// maxFiles bounds the config files one check reads, includes and all.
	maxFiles = 32
	// maxHooks bounds the entries of a hooks directory looked at.
	maxHooks = 256
	// maxKeyLen bounds a key as a finding shows it: a subsection is the
	// repository's to make long.
	maxKeyLen = 80
)

// Finding is one thing in a repository's git files that makes git run a
// program or read another file, or a file basis could not check.
type Finding struct {
	// File is the config file (or the hooks directory) it is in.
	File string
	// Line is the line of the variable in File; 0 when it is about the
	// file as a whole.
	Line int
	// Key is the variable (core.fsmonitor, diff.x.textconv) or the hook
	// (hooks/pre-commit), made printable and shortened; never its value,
	// which the repository wrote and may be long or hostile. "" when the
	// finding is about the file.
	Key string
	// What it does: [RunsProgram], [Includes], [HookRuns], or what is
	// wrong with the file.
	What string
	// IncludedFrom and IncludedAt, for a file read through an include,
	// are the file and line that included it.
	IncludedFrom string
	IncludedAt   int
}

// HookRuns: an executable hook git runs on some commands.
const HookRuns = "is a hook git runs on some commands"

// String is "FILE:LINE: KEY WHAT" (the line and key when there are
// any), with absolute paths.
func (f Finding) String() string { return f.Format(nil) }

// Format is [Finding.String] with each path shown as path(p) shows it
// (relative to a workspace, say); nil shows paths as they are. Paths and
// keys are made printable: a repository chooses them.
func (f Finding) Format(path func(string) string) string {
	if path == nil {
		path = func(p string) string { return p }
	}
	var b strings.Builder
	b.WriteString(printable(path(f.File), 4*maxKeyLen))
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d", f.Line)
	}
	b.WriteString(": ")
	if f.Key != "" {
		b.WriteString(f.Key)
		b.WriteString(" ")
	}
	b.WriteString(f.What)
	if f.IncludedFrom != "" {
		fmt.Fprintf(&b, " (included from %s:%d)", printable(path(f.IncludedFrom), 4*maxKeyLen), f.IncludedAt)
	}
	return b.String()
}

// Options steer Check.
type Options struct {
	// Home is where an include path's "~/" points; empty leaves such
	// includes reported but not read.
	Home string
}

// Repository finds the git directory git would use for a command run in
// dir, as git's discovery does: up from dir, the first directory with a
// .git directory that is a repository, a .git file whose "gitdir:" line
// names one, or that is itself a (bare) repository. It returns "" when
// there is none. A .git file that cannot be read, or names no
// repository, is a finding: git refuses to run there, but basis says so.
func Repository(ctx context.Context, dir string) (gitDir string, problem *Finding) {
	dir = filepath.Clean(dir)
	for {
		dotgit := filepath.Join(dir, ".git")
		info, err := os.Stat(dotgit)
		switch {
		case err == nil && info.IsDir() && isGitDir(dotgit):
			return dotgit, nil
		case err == nil && info.Mode().IsRegular():
			target, why := readGitFile(ctx, dotgit)
			if why != "" {
				return "", &Finding{File: dotgit, What: why}
			}
			return target, nil
		case isGitDir(dir):
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// isGitDir is git's is_git_directory, near enough: HEAD, and objects and
// refs here or in the common directory a worktree's commondir names.
func isGitDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	common := dir
	if c, ok := commonDir(context.Background(), dir); ok {
		common = c
	}
	for _, sub := range []string{"objects", "refs"} {
		if info, err := os.Stat(filepath.Join(common, sub)); err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

// readGitFile reads a .git file's "gitdir: PATH" line, a PATH relative to
// the file's directory, and checks that it names a repository.
func readGitFile(ctx context.Context, file string) (string, string) {
	data, err := configfile.Read(ctx, file, maxPointerSize)
	if err != nil {
		return "", "is a .git file basis cannot read (" + configfile.ReadProblem(ctx, err, maxPointerSize, "a .git file") + ")"
	}
	text, ok := strings.CutPrefix(string(data), "gitdir: ")
	if !ok {
		return "", "is a .git file without a gitdir: line"
	}
	target := strings.TrimRight(text, " \t\r\n")
	if target == "" || strings.IndexByte(target, 0) >= 0 || strings.ContainsAny(target, "\n") {
		return "", "is a .git file whose gitdir: line names no directory"
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(file), target)
	}
	if !isGitDir(target) {
		return "", "is a .git file whose gitdir: names no repository"
	}
	return filepath.Clean(target), ""
}

// commonDir is the directory a worktree's git directory shares with the
// main one, from its commondir file.
func commonDir(ctx context.Context, gitDir string) (string, bool) {
	data, err := configfile.Read(ctx, filepath.Join(gitDir, "commondir"), maxPointerSize)
	if err != nil {
		return "", false
	}
	c := strings.TrimRight(string(data), " \t\r\n")
	if c == "" || strings.IndexByte(c, 0) >= 0 {
		return "", false
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c), true
}

// Check reads the config files of the repository whose git directory is
// gitDir — its config (the common directory's, for a worktree), its
// config.worktree, and every file they include, to git's depth — and
// lists its executable hooks, and returns what makes git run a program.
// Nothing is run; every read is bounded.
func Check(ctx context.Context, gitDir string, opts Options) []Finding {
	c := &checker{ctx: ctx, opts: opts, seen: map[string]bool{}}
	common := gitDir
	if dir, ok := commonDir(ctx, gitDir); ok {
		common = dir
	}
	c.file(filepath.Join(common, "config"), "", 0, 0)
	if common != gitDir {
		c.file(filepath.Join(gitDir, "config"), "", 0, 0)
	}
	c.file(filepath.Join(gitDir, "config.worktree"), "", 0, 0)
	c.hooks(filepath.Join(common, "hooks"))
	return c.out
}

type checker struct {
	ctx   context.Context
	opts  Options
	seen  map[string]bool
	files int
	out   []Finding
}

func (c *checker) add(f Finding) { c.out = append(c.out, f) }

// file reads one config file; a missing one is none.
func (c *checker) file(path, from string, at, depth int) {
	path = filepath.Clean(path)
	if c.seen[path] {
		return
	}
	c.seen[path] = true
	if c.files >= maxFiles {
		c.add(Finding{File: path, What: fmt.Sprintf("was not checked: basis reads at most %d config files for one repository", maxFiles), IncludedFrom: from, IncludedAt: at})
		return
	}
	c.files++
	data, err := configfile.Read(c.ctx, path, MaxConfigSize)
	if errors.Is(err, fs.ErrNotExist) && from == "" {
		return
	}
	if err != nil {
		c.add(Finding{File: path, What: "could not be checked (" + configfile.ReadProblem(c.ctx, err, MaxConfigSize, "a git config") + ")", IncludedFrom: from, IncludedAt: at})
		return
	}
	entries, err := Parse(data)
	for _, e := range entries {
		what := What(e)
		if what == "" {
			continue
		}
		c.add(Finding{File: path, Line: e.Line, Key: printable(e.Key(), maxKeyLen), What: what, IncludedFrom: from, IncludedAt: at})
		if what == Includes {
			c.include(path, e, depth)
		}
	}
	var se *SyntaxError
	if errors.As(err, &se) {
		c.add(Finding{File: path, Line: se.Line, What: "cannot be read past this line by basis (git refuses such a file, or reads it otherwise); what follows was not checked", IncludedFrom: from, IncludedAt: at})
	}
}

// include follows an include.path or includeIf.*.path, whatever its
// condition: the included file's settings may apply.
func (c *checker) include(from string, e Entry, depth int) {
	if depth+1 > MaxIncludeDepth {
		c.add(Finding{File: from, Line: e.Line, What: fmt.Sprintf("includes files deeper than git's %d levels; not followed", MaxIncludeDepth)})
		return
	}
	target := e.Value
	switch {
	case strings.HasPrefix(target, "~/"):
		if c.opts.Home == "" {
			return
		}
		target = filepath.Join(c.opts.Home, target[2:])
	case strings.HasPrefix(target, "~"):
		return // another user's home: not followed, the include itself is reported
	case !filepath.IsAbs(target):
		target = filepath.Join(filepath.Dir(from), target)
	}
	c.file(target, from, e.Line, depth+1)
}

// hooks lists the executable files of a hooks directory that are not
// git's samples.
func (c *checker) hooks(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxHooks)
	for _, de := range entries {
		name := de.Name()
		if strings.HasSuffix(name, ".sample") || strings.HasPrefix(name, ".") {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		c.add(Finding{File: dir, Key: "hooks/" + printable(name, maxKeyLen), What: HookRuns})
	}
}

// printable escapes what a terminal would act on (control and format
// characters, invalid UTF-8) and the backslash, and shortens s to at
// most max characters.
func printable(s string, max int) string {
	var b strings.Builder
	for n := 0; s != ""; n++ {
		if n >= max {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || isFormat(r) || r == '\\':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		s = s[size:]
	}
	return b.String()
}

// isFormat: the Unicode characters that reorder or hide text (bidi
// controls, zero-width joiners), which a reader must see escaped.
func isFormat(r rune) bool {
	return r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0xfeff || r == 0x061c
}
