//go:build unix

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// alwaysProtected is what stays read-only in every writable directory
// whatever the policy says: what programs outside the sandbox execute or
// trust. Git runs hooks and commands named in .git/config
// (core.fsmonitor, hooks/*) on the operator's next plain `git status`;
// basis itself reads .basis/ (tools.json, sandbox.json, rules) and
// .mcp.json and starts what they name.
var alwaysProtected = []string{".git", ".basis", ".mcp.json"}

// Bounds of the search for nested repositories: .git is looked for in
// every directory up to nestedDepth levels below a writable directory
// (so root/a/b/c/.git is found, root/a/b/c/d/.git is not), reading at
// most walkBudget directories per call over all writable directories,
// breadth first, never following symbolic links nor entering .git or
// node_modules. Submodules listed in a .gitmodules are found at any depth,
// up to maxSubmodules.
const (
	nestedDepth   = 3
	walkBudget    = 2000
	maxSubmodules = 256
	// maxGitFile bounds what is read of a .gitmodules, a .git file or a
	// git config: the files are small, a larger one is not followed.
	maxGitFile = 64 << 10
)

// skipDirs are not searched for nested repositories: dependency trees,
// large and not repositories of the operator's.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// validProtect reports a protected path that cannot be used: empty, with
// a NUL, or relative and leaving the directory it is looked up in.
func validProtect(p string) error {
	switch {
	case p == "" || strings.IndexByte(p, 0) >= 0:
		return errors.New("is empty or holds a NUL byte")
	case filepath.IsAbs(p):
		return nil
	}
	c := filepath.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return errors.New("must name something inside the writable directory it is looked up in (no ..)")
	}
	return nil
}

// linkError refuses a protected path that is a symbolic link, or is
// reached through one inside a writable directory: the mount that holds
// a path read-only holds what the link points to, not the link, and the
// program could replace the link.
func linkError(path string) error {
	return &UnavailableError{Reason: path + " is a symbolic link (or is reached through one) inside a directory the program may write; " +
		"the sandbox keeps it read-only with a mount, which holds what a link points to but not the link itself: replace the link by what it points to"}
}

// finder collects the paths to protect for one call.
type finder struct {
	listings *listings
	roots    []string // writable directories, resolved
	found    []string
	seen     map[string]bool
	read     map[string]bool    // directories the walk has read
	listed   map[string]listing // the writable directories' listings
	err      error
	budget   int
	modules  int
	home     string
}

// protectedPaths returns what a program started in dir must find
// read-only: the existing .git, .basis and .mcp.json of every writable
// directory, the policy's protected paths, nested repositories and
// submodules, the git directories their .git files point to and the hook
// directories and included config files their configs name — each
// resolved, inside a writable directory, sorted, none beneath another.
// The error refuses the run (a protected path that is a symbolic link);
// the paths are what was found anyway.
func (s *Sandbox) protectedPaths(dir string) ([]string, error) {
	if s.policy.Mode != WorkspaceWrite {
		return nil, nil
	}
	s.listings.drain()
	f := &finder{listings: s.listings, seen: map[string]bool{}, read: make(map[string]bool, 64), listed: map[string]listing{}, budget: walkBudget}
	f.home, _ = os.UserHomeDir()
	var given []string
	for _, w := range s.writableDirs(dir) {
		if slices.Contains(given, w) {
			continue // the workspace is usually the directory too
		}
		given = append(given, w)
		r, err := evalSymlinks(w)
		if err != nil || slices.Contains(f.roots, r) {
			continue
		}
		f.roots = append(f.roots, r)
	}
	var names, absolute []string
	for _, p := range slices.Concat(alwaysProtected, s.policy.Protect) {
		if filepath.IsAbs(p) {
			absolute = append(absolute, filepath.Clean(p))
		} else {
			names = append(names, filepath.Clean(p))
		}
	}
	for _, root := range f.roots {
		l, listed := f.list(root)
		for _, n := range names {
			if listed && slices.Contains(alwaysProtected, n) {
				f.addListed(root, n, l)
			} else {
				f.add(root, n)
			}
		}
	}
	for _, p := range absolute {
		f.addAbsolute(p)
	}
	for _, root := range f.roots {
		f.walk(root)
	}
	return outermost(f.found), f.err
}

// writableDirs are the writable directories that may hold something to
// protect: the per-call TMPDIR is fresh and basis's cache is basis's own.
func (s *Sandbox) writableDirs(dir string) []string {
	return slices.Concat([]string{s.workspace, dir}, s.policy.Write)
}

// add protects root/rel when it exists and no component below root is a
// symbolic link.
func (f *finder) add(root, rel string) {
	p := root
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return // missing: nothing to hold (see the README: what remains)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if f.err == nil {
				f.err = linkError(p)
			}
			return
		}
	}
	f.addFound(p)
}

// addListed protects root/name, one of alwaysProtected, when root's
// listing l has it: what add finds, without a lookup of its own (the
// listing was read, or found unchanged, by this search).
func (f *finder) addListed(root, name string, l listing) {
	mode, ok := l.always[name]
	if !ok {
		return
	}
	p := filepath.Join(root, name)
	if mode&fs.ModeSymlink != 0 {
		if f.err == nil {
			f.err = linkError(p)
		}
		return
	}
	f.addFound(p)
}

// addFound protects p, once.
func (f *finder) addFound(p string) {
	if !f.seen[p] {
		f.seen[p] = true
		f.found = append(f.found, p)
	}
}

// list is dir's listing. A writable directory's path is looked at again
// (see listings.list), once per search: its listing is asked for before
// the walk and by it; the walk reads every other directory once.
func (f *finder) list(dir string) (listing, bool) {
	if l, ok := f.listed[dir]; ok {
		return l, true
	}
	root := slices.Contains(f.roots, dir)
	l, ok := f.listings.list(dir, root)
	if ok && root {
		f.listed[dir] = l
	}
	return l, ok
}

// addAbsolute protects p when it lies in a writable directory, as written
// or once symbolic links outside the writable directories are resolved.
func (f *finder) addAbsolute(p string) {
	candidates := []string{p}
	if parent, err := evalSymlinks(filepath.Dir(p)); err == nil {
		candidates = append(candidates, filepath.Join(parent, filepath.Base(p)))
	}
	for _, c := range candidates {
		for _, root := range f.roots {
			if rel, ok := beneath(c, root); ok {
				if rel == "." {
					f.addRoot(root)
				} else {
					f.add(root, rel)
				}
				return
			}
		}
	}
}

// addRoot protects a writable directory as a whole (an operator may
// protect one of its own write paths).
func (f *finder) addRoot(root string) { f.addFound(root) }

// beneath returns path relative to root when it is root or lies beneath
// it, lexically.
func beneath(path, root string) (string, bool) {
	if !within(path, root) {
		return "", false
	}
	rel, err := filepath.Rel(root, path)
	return rel, err == nil
}

// rootOf returns the writable directory p lies in, if any.
func (f *finder) rootOf(p string) (string, string, bool) {
	for _, root := range f.roots {
		if rel, ok := beneath(p, root); ok {
			return root, rel, true
		}
	}
	return "", "", false
}

// walk looks for repositories below root, breadth first within the
// bounds above, and follows what each one points to.
func (f *finder) walk(root string) {
	type level struct {
		dir   string
		depth int
	}
	queue := []level{{root, 0}}
	for len(queue) > 0 && f.budget > 0 {
		d := queue[0]
		queue = queue[1:]
		if f.read[d.dir] {
			continue // a writable directory inside another one
		}
		f.read[d.dir] = true
		f.budget--
		l, ok := f.list(d.dir)
		if !ok {
			continue
		}
		if l.dotgit != nil {
			f.repository(d.dir, l.dotgit, true)
		}
		if l.gitmodules {
			f.submodules(d.dir)
		}
		if d.depth < nestedDepth {
			for _, name := range l.subdirs {
				queue = append(queue, level{filepath.Join(d.dir, name), d.depth + 1})
			}
		}
	}
}

// listing is what the search needs of one directory's entries.
type listing struct {
	dotgit     fs.DirEntry // its .git, or nil
	gitmodules bool        // it has a .gitmodules file
	subdirs    []string    // the subdirectories to search, links and skipDirs left out
	// always has the type of each name of alwaysProtected it has: a
	// writable directory's are protected from its listing.
	always map[string]fs.FileMode
}

// maxListings bounds the listings a Sandbox remembers, and so the git
// configs.
const maxListings = 4 * walkBudget

// listings remembers directories' listings across calls, so that a
// search reads only the directories that changed since: one lstat instead
// of reading a directory. A listing is used again only while the
// directory's device, inode and change time are those it was read with,
// and only once that change time lies a moment before the read (the
// filesystem's clock is coarse: an entry added within the same tick as
// the read would not move it). The change time moves with every entry
// added, removed or renamed, and a program can set a directory's
// modification time back but not its change time.
type listings struct {
	mu    sync.Mutex
	m     map[string]stamped[listing]
	reads int // directories read, for tests
	// live are the listings of watched directories (see dirWatch):
	// current until an event says otherwise, whatever their change time.
	live map[string]stamped[listing]
	// watch is made at the searchesBeforeWatch+1st search; nil before,
	// and where the kernel offers none.
	watch      *dirWatch
	watchTried bool
	searches   int
	// staled counts what made listings stale: a listing read while it
	// moved is not kept live, since the event that moved it, read by
	// another search, may be about what was read.
	staled uint64
	// configs are git config files' entries (.git/config, .gitmodules),
	// remembered the same way: writing a file moves its change time too.
	configs     map[string]stamped[[]gitEntry]
	configReads int // config files read, for tests
}

// processListings are what every Sandbox of this process remembers:
// listings are facts about directories, whichever policy searches them.
var processListings listings

// searchesBeforeWatch is how many searches a process makes before it
// watches what it lists. The kernel ends an inotify instance that
// watched something with a grace period of its own, which the process's
// exit waits for (milliseconds, more than a call costs): a process that
// searches once or twice (`basis call` describes its call and starts it)
// would pay that for nothing.
const searchesBeforeWatch = 2

// drain counts a search and applies the events queued since the last
// one: the listings they make stale are no longer live.
func (ls *listings) drain() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.searches++
	if ls.watch == nil {
		return
	}
	if ls.watch.drain(ls.staleLocked) {
		ls.staled++
		for dir := range ls.live {
			ls.staleLocked(dir, false)
		}
	}
}

// unwatchLocked stops watching dir; a listing of it being read now is
// not kept live, since its changes would go unreported. ls.mu is held.
func (ls *listings) unwatchLocked(dir string) {
	ls.staled++
	ls.watch.unwatch(dir)
}

// staleLocked drops dir's live listing, and with subtree every live
// listing beneath it; ls.mu is held.
func (ls *listings) staleLocked(dir string, subtree bool) {
	ls.staled++
	drop := func(p string) {
		delete(ls.live, p)
		ls.unwatchLocked(p)
	}
	if _, ok := ls.live[dir]; ok {
		drop(dir)
	}
	if subtree {
		for p := range ls.live {
			if p != dir && within(p, dir) {
				drop(p)
			}
		}
	}
}

// stamped is what was read of a file, with the stamp it had.
type stamped[T any] struct {
	stamp fileStamp
	value T
}

// clock is the time a listing is read at; tests move it.
var clock = time.Now

// remembered returns what read makes of path, whose lstat is fi: what m
// holds while path's stamp is still the one it was read with, else read's
// answer, which m keeps once that stamp is settled (see listings). mu
// guards m; read runs without it.
func remembered[T any](mu *sync.Mutex, m *map[string]stamped[T], path string, fi fs.FileInfo, read func() (T, bool)) (T, bool) {
	stamp, stable := stampOf(fi)
	if stable {
		mu.Lock()
		held, hit := (*m)[path]
		mu.Unlock()
		if hit && held.stamp == stamp {
			return held.value, true
		}
	}
	v, ok := read()
	if ok && stable && stampSettled(stamp, clock()) {
		mu.Lock()
		if *m == nil || len(*m) >= maxListings {
			*m = make(map[string]stamped[T])
		}
		(*m)[path] = stamped[T]{stamp: stamp, value: v}
		mu.Unlock()
	}
	return v, ok
}

// list returns dir's listing, read again unless it is known unchanged;
// false when dir is not a directory (a link included) or cannot be read.
// A live listing is used as it is, but where verify asks for a look at
// dir first: a writable directory's path, which the search reached by no
// listing, must still name the directory that was read.
func (ls *listings) list(dir string, verify bool) (listing, bool) {
	ls.mu.Lock()
	live, isLive := ls.live[dir]
	ls.mu.Unlock()
	if isLive && !verify {
		return live.value, true
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return listing{}, false
	}
	stamp, stable := stampOf(fi)
	if isLive {
		if stable && stamp.sameFile(live.stamp) {
			return live.value, true
		}
		ls.mu.Lock()
		ls.staleLocked(dir, true) // the path names another directory now
		ls.mu.Unlock()
	}
	ls.mu.Lock()
	if !ls.watchTried && ls.searches > searchesBeforeWatch {
		ls.watchTried, ls.watch = true, newDirWatch()
	}
	// Watched before it is read: a change from here on is reported.
	watched := stable && ls.watch.watchDir(dir)
	staled := ls.staled
	ls.mu.Unlock()
	if !watched {
		return remembered(&ls.mu, &ls.m, dir, fi, func() (listing, bool) { return ls.read(dir) })
	}
	l, ok := ls.read(dir)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !ok {
		ls.staleLocked(dir, true) // gone or unreadable: nothing of it is kept
		ls.unwatchLocked(dir)
		return l, false
	}
	if ls.staled != staled {
		// Another search read events meanwhile, maybe about dir, or
		// stopped watching it: what was read serves this search, and
		// the next reads dir again (its watch stays, for a reader that
		// keeps it).
		return l, true
	}
	if ls.live == nil {
		// Bounded by the directories the watch may hold (maxWatched).
		ls.live = make(map[string]stamped[listing])
	}
	ls.live[dir] = stamped[listing]{stamp: stamp, value: l}
	return l, true
}

// read reads dir's listing.
func (ls *listings) read(dir string) (listing, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return listing{}, false
	}
	ls.mu.Lock()
	ls.reads++
	ls.mu.Unlock()
	var l listing
	for _, e := range entries {
		name := e.Name()
		if slices.Contains(alwaysProtected, name) {
			if l.always == nil {
				l.always = make(map[string]fs.FileMode, len(alwaysProtected))
			}
			l.always[name] = e.Type()
		}
		switch {
		case name == ".git":
			l.dotgit = e
		case name == ".gitmodules" && e.Type().IsRegular():
			l.gitmodules = true
		case e.IsDir() && !skipDirs[name]:
			l.subdirs = append(l.subdirs, name)
		}
	}
	return l, true
}

// repository protects worktree/.git and what it leads to. listed says
// the walk came to worktree: down from a writable directory through
// listings' subdirectories, which leave links out, and e is from
// worktree's listing, so nothing on the way is a link.
func (f *finder) repository(worktree string, e fs.DirEntry, listed bool) {
	dotgit := filepath.Join(worktree, ".git")
	root, rel, ok := f.rootOf(dotgit)
	if !ok {
		return
	}
	if e.Type()&fs.ModeSymlink != 0 {
		if f.err == nil {
			f.err = linkError(dotgit)
		}
		return
	}
	if listed {
		f.addFound(dotgit)
	} else {
		f.add(root, rel) // a submodule's path may lead through a link
	}
	gitdir := dotgit
	if !e.IsDir() {
		// A .git file ("gitdir: PATH") is how submodules and worktrees
		// point to their repository, which may lie in a writable
		// directory too.
		gitdir = readGitdir(dotgit)
		if gitdir == "" {
			return
		}
		f.protectIfWritable(gitdir)
	}
	f.config(worktree, gitdir)
}

// protectIfWritable protects p (absolute, symbolic links resolved
// outside the writable directories) when it lies in one.
func (f *finder) protectIfWritable(p string) {
	if _, err := os.Lstat(p); err != nil {
		return
	}
	f.addAbsolute(p)
}

// readGitdir returns the absolute path a .git file points to, or "".
func readGitdir(dotgit string) string {
	data := readSmall(dotgit)
	line, _, _ := bytes.Cut(data, []byte("\n"))
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("gitdir:"))
	if !ok {
		return ""
	}
	p := string(bytes.TrimSpace(rest))
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(dotgit), p)
	}
	return filepath.Clean(p)
}

// config protects the hook directory (core.hooksPath) and the included
// files (include.path, includeIf.*.path) that gitdir's config names:
// git runs the former and reads the latter as its own config. Includes
// of includes are not followed.
func (f *finder) config(worktree, gitdir string) {
	cfg := filepath.Join(gitdir, "config")
	for _, kv := range f.listings.gitConfig(cfg) {
		var p string
		switch {
		case kv.section == "core" && kv.key == "hookspath":
			p = f.expand(kv.value, worktree)
		case (kv.section == "include" || kv.section == "includeif") && kv.key == "path":
			p = f.expand(kv.value, gitdir)
		default:
			continue
		}
		if p != "" {
			f.protectIfWritable(p)
		}
	}
}

// expand makes a path from a git config absolute: "~/" is the home
// directory, a relative path is relative to base.
func (f *finder) expand(v, base string) string {
	if rest, ok := strings.CutPrefix(v, "~/"); ok {
		if f.home == "" {
			return ""
		}
		return filepath.Join(f.home, rest)
	}
	if v == "" || strings.IndexByte(v, 0) >= 0 {
		return ""
	}
	if !filepath.IsAbs(v) {
		v = filepath.Join(base, v)
	}
	return filepath.Clean(v)
}

// submodules protects the .git of every submodule that dir/.gitmodules
// lists, and of theirs, at any depth up to maxSubmodules in all.
func (f *finder) submodules(dir string) {
	for _, kv := range f.listings.gitConfig(filepath.Join(dir, ".gitmodules")) {
		if kv.section != "submodule" || kv.key != "path" || validProtect(kv.value) != nil || filepath.IsAbs(kv.value) {
			continue
		}
		if f.modules >= maxSubmodules {
			return
		}
		f.modules++
		sub := filepath.Join(dir, filepath.Clean(kv.value))
		fi, err := os.Lstat(filepath.Join(sub, ".git"))
		if err != nil {
			continue // not checked out
		}
		f.repository(sub, fs.FileInfoToDirEntry(fi), false)
		if _, err := os.Lstat(filepath.Join(sub, ".gitmodules")); err == nil {
			f.submodules(sub)
		}
	}
}

// gitConfig returns the entries of the git config file at path (see
// gitConfig), read again unless it is known unchanged; none when it is
// not a regular file or cannot be read.
func (ls *listings) gitConfig(path string) []gitEntry {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	entries, _ := remembered(&ls.mu, &ls.configs, path, fi, func() ([]gitEntry, bool) {
		ls.mu.Lock()
		ls.configReads++
		ls.mu.Unlock()
		return gitConfig(readSmall(path)), true
	})
	return entries
}

// readSmall reads the first maxGitFile bytes of a regular file, without
// following a final symbolic link; nil when it cannot.
func readSmall(path string) []byte {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer file.Close()
	data, _ := io.ReadAll(io.LimitReader(file, maxGitFile))
	return data
}

// gitEntry is one "key = value" of a git config file.
type gitEntry struct {
	section, key, value string
}

// gitConfig reads the entries of a git config file (the .git/config and
// .gitmodules format) in the forms git writes: [section] and
// [section "sub"] headers, key = value lines, values optionally quoted,
// # and ; comments. Section and key names are lower-cased; subsections
// are dropped. Anything else is skipped.
func gitConfig(data []byte) []gitEntry {
	var out []gitEntry
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxGitFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				section = ""
				continue
			}
			name := strings.TrimSpace(line[1:end])
			if i := strings.IndexAny(name, " \t\""); i >= 0 {
				name = name[:i]
			}
			if i := strings.IndexByte(name, '.'); i >= 0 { // [section.sub], the old form
				name = name[:i]
			}
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			continue
		}
		out = append(out, gitEntry{section: section, key: strings.ToLower(strings.TrimSpace(key)), value: gitValue(value)})
	}
	return out
}

// gitValue unquotes a git config value and drops a trailing comment.
func gitValue(v string) string {
	var b strings.Builder
	quoted := false
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// outermost sorts paths and drops those beneath another: a read-only
// mount holds everything below it.
func outermost(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(paths, func(q string) bool { return q != p && within(p, q) }) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
