//go:build unix

package declared

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract/childenv"
	"github.com/basis-go/basis/subprocess"
)

// The manifest format and where it lives.
const (
	// SchemaVersion is the manifest format this package reads: the value
	// of the manifest's "schema" key.
	SchemaVersion = 1
	// WorkspaceFile is the workspace's manifest, relative to its root.
	WorkspaceFile = ".basis/tools.json"
	// GlobalFile is the global manifest's name inside the config
	// directory. It is not hidden: a directory that exists to hold
	// configuration would be hiding it from the person who put it there.
	GlobalFile = "tools.json"
	// DefaultTimeout bounds a call when the manifest gives no timeout_ms.
	DefaultTimeout = 120 * time.Second
)

// MaxManifestSize is the largest manifest [Load] reads: far above any
// real one, far below what would hurt. A manifest that is a symbolic link
// to /dev/zero is refused before a byte is read (it is not a regular
// file); a regular file past this size is refused unread.
const MaxManifestSize = configfile.DefaultLimit

// Options says where the global manifest is and what the programs'
// environment is made of. A nil *Options means every default: no global
// manifest, the process's environment, no reserved names, no sandbox.
type Options struct {
	// ConfigDir is the global configuration directory, holding the global
	// tools.json. Empty means there is no global manifest.
	ConfigDir string
	// CommandEnv is the runtime's command environment (NAME=value
	// entries): the second layer of every program's environment, over the
	// inherited one and under the manifest's env. It is the host's own
	// statement, so it is given to programs whole.
	CommandEnv []string
	// Environ is the environment basis runs in; nil means os.Environ() at
	// load time. It serves two purposes, kept apart:
	//
	//   - ${VAR} placeholders are looked up in all of it (and in
	//     CommandEnv, which wins), so "env": {"GITHUB_TOKEN":
	//     "${GITHUB_TOKEN}"} hands a program a credential by name;
	//   - programs inherit only part of it, their first layer:
	//     childenv.Inherited(Environ, PassEnv), which leaves out basis's
	//     own BASIS_* variables and every name that looks like a
	//     credential (TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, KEY,
	//     SSH_AUTH_SOCK) that PassEnv does not name.
	//
	// Entries of either that no program can receive (no "=", an empty
	// name, a NUL byte) are left out.
	Environ []string
	// PassEnv names the credential-looking variables of Environ that
	// every program inherits all the same: names, or patterns with *
	// ("GITHUB_*"); see [childenv.Passes]. It is the operator's setting
	// (sandbox.json's "pass_env" for the basis command). basis's own
	// BASIS_* variables pass whatever it says.
	PassEnv []string
	// Reserved lists names the host has taken (such as "spawn" and its
	// own tools). Declaring one is a load error naming the file and tool.
	Reserved []string
	// Sandbox, when set, confines every tool's program: it is asked, at
	// each preview and each Execute, for the confinement of the named
	// tool (network: the manifest's "network") started in dir — the
	// directory the preview's Dir shows, so a cwd with placeholders is
	// described as written, never expanded. Its Subject is shown in the
	// preview's subject under "sandbox" and its Confine confines the run.
	// An error (or no confinement) refuses the call with the hook's own
	// message, wrapping [contract.ErrRefused]: a tool never runs
	// unconfined because its sandbox could not be had. Nil runs programs
	// unconfined, and subjects have no "sandbox".
	Sandbox subprocess.Confiner
	// ReadOnlySandbox, when set, confines the programs of entries that
	// say "sandbox": "read-only" instead of Sandbox. A call whose
	// confinement it reports read-only ([subprocess.Confinement].ReadOnly:
	// held so by the kernel) has side effect none, and so passes a gate
	// unasked; otherwise (the sandbox is off, say) it is process, asked
	// about like any other. Nil: such entries are confined by Sandbox and
	// are never read-only — the manifest alone cannot make a call pass.
	ReadOnlySandbox subprocess.Confiner
}

// loader is what loading works out once from root and Options.
type loader struct {
	root     string
	baseEnv  []string          // what programs inherit of Environ, then CommandEnv, merged
	envIndex map[string]int    // position of each name in baseEnv
	vars     map[string]string // all of Environ, then CommandEnv: for ${VAR} look-ups
	reserved map[string]bool
	sandbox  subprocess.Confiner
	// readOnlySandbox is Options.ReadOnlySandbox.
	readOnlySandbox subprocess.Confiner
	realRoot        string // root after symlinks
}

// newLoader works out root (made absolute: tools keep working whatever the
// process's working directory is later; empty is the current directory)
// and opts.
func newLoader(root string, opts *Options) (*loader, error) {
	if opts == nil {
		opts = &Options{}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &configfile.Error{File: root, Err: &problem{kind: errUnreadable, cause: err,
			text: "the workspace root cannot be made absolute: " + configfile.Reason(err)}}
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	l := &loader{
		root:            abs,
		baseEnv:         subprocess.MergeEnv(usable(childenv.Inherited(environ, opts.PassEnv)), usable(opts.CommandEnv)),
		envIndex:        make(map[string]int),
		vars:            make(map[string]string),
		reserved:        make(map[string]bool, len(opts.Reserved)),
		sandbox:         opts.Sandbox,
		readOnlySandbox: opts.ReadOnlySandbox,
		realRoot:        realRoot(abs),
	}
	for i, entry := range l.baseEnv {
		name, _, _ := strings.Cut(entry, "=")
		l.envIndex[name] = i
	}
	// Placeholders see the whole environment, not only what programs
	// inherit: naming a variable in a manifest is how it is passed.
	for _, entry := range subprocess.MergeEnv(usable(environ), usable(opts.CommandEnv)) {
		if name, value, ok := strings.Cut(entry, "="); ok {
			l.vars[name] = value
		}
	}
	for _, name := range opts.Reserved {
		l.reserved[strings.ToLower(name)] = true
	}
	return l, nil
}

// withEnv layers a tool's env (NAME=value entries, each name once) over
// the base environment, as subprocess.MergeEnv would, without rebuilding
// the index for every tool.
func (l *loader) withEnv(entries []string) []string {
	out := make([]string, len(l.baseEnv), len(l.baseEnv)+len(entries))
	copy(out, l.baseEnv)
	for _, entry := range entries {
		name, _, _ := strings.Cut(entry, "=")
		if i, ok := l.envIndex[name]; ok {
			out[i] = entry
		} else {
			out = append(out, entry)
		}
	}
	return out
}

func (l *loader) lookup(name string) (string, bool) {
	v, ok := l.vars[name]
	return v, ok
}

// usable keeps the NAME=value entries a program can receive; anything
// else (no "=", no name, a NUL byte) would make every run fail.
func usable(env []string) []string {
	out := make([]string, 0, len(env))
	for _, entry := range env {
		if name, _, ok := strings.Cut(entry, "="); ok && name != "" && strings.IndexByte(entry, 0) < 0 {
			out = append(out, entry)
		}
	}
	return out
}

// candidates are the manifests that may exist, most specific first.
func (l *loader) candidates(opts *Options) []string {
	paths := []string{filepath.Join(l.root, WorkspaceFile)}
	if opts != nil && opts.ConfigDir != "" {
		dir, err := filepath.Abs(opts.ConfigDir)
		if err != nil {
			dir = opts.ConfigDir
		}
		paths = append(paths, filepath.Join(dir, GlobalFile))
	}
	return paths
}

// Discover returns every manifest that exists, most specific first: the
// workspace's, then the global one. A missing file, or a directory where
// the file would be, is no manifest. A file reached twice (the config
// directory is the workspace's .basis, or a symbolic link) is listed
// once. A path that exists but cannot be examined is an error. root and
// opts are as for [Load].
func Discover(root string, opts *Options) ([]string, error) {
	l, err := newLoader(root, opts)
	if err != nil {
		return nil, errors.Join(err)
	}
	paths, problems := discover(l.candidates(opts))
	paths, problems = l.inWorkspace(paths, problems)
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return paths, nil
}

func discover(candidates []string) ([]string, []error) {
	var (
		paths    []string
		infos    []os.FileInfo
		problems []error
	)
	for _, path := range candidates {
		info, err := os.Stat(path)
		if err != nil {
			if _, lerr := os.Lstat(path); lerr == nil && errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, &configfile.Error{File: path, Err: &problem{kind: errUnreadable, cause: err,
					text: "is a symbolic link to nothing; fix or remove it"}})
				continue
			}
			if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
				problems = append(problems, &configfile.Error{File: path, Err: &problem{kind: errUnreadable, cause: err,
					text: "cannot be examined: " + configfile.Reason(err)}})
			}
			continue
		}
		if info.IsDir() {
			continue
		}
		if slices.ContainsFunc(infos, func(seen os.FileInfo) bool { return os.SameFile(seen, info) }) {
			continue
		}
		paths = append(paths, path)
		infos = append(infos, info)
	}
	return paths, problems
}

// Load returns every tool the manifests declare, after layering: the
// workspace's (root/.basis/tools.json; root is the workspace root, where a
// relative program path or cwd resolves, and empty means the current
// directory), then the global one (opts.ConfigDir), name-ordered within
// each manifest. A global tool with the name of a workspace tool is
// dropped: the more specific declaration wins. Every manifest is read and every
// problem in any of them is reported, as an [errors.Join] of [*configfile.Error]
// values; any problem means no tools at all, never a shorter list.
//
// A ${VAR} naming an unset variable is not such a problem: it breaks only
// its own tool, which is returned unavailable ([Tool.Unavailable]) and
// refuses its calls, while every other tool works. Reading honours ctx: a
// cancelled load returns an error wrapping ctx's.
func Load(ctx context.Context, root string, opts *Options) ([]*Tool, error) {
	l, err := newLoader(root, opts)
	if err != nil {
		return nil, errors.Join(err)
	}
	candidates := l.candidates(opts)
	paths, problems := discover(candidates)
	paths, problems = l.inWorkspace(paths, problems)
	var layers [][]*Tool
	for _, path := range paths {
		// The workspace's manifest is the first candidate; a config
		// directory that is the workspace's .basis was listed once, as
		// the workspace's.
		tools, errs := l.loadFile(ctx, path, path == candidates[0])
		problems = append(problems, errs...)
		layers = append(layers, tools)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	var out []*Tool
	taken := make(map[string]bool)
	for _, tools := range layers {
		for _, t := range tools {
			if !taken[t.spec.Name] {
				taken[t.spec.Name] = true
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// LoadFile reads one manifest at path, for the workspace at root, with
// opts' environment and reserved names, and returns its tools in name order, unavailable ones
// included, as [Load] does. Unlike Load, a missing file is an error
// (wrapping [fs.ErrNotExist]). Every problem is reported, as an
// [errors.Join] of [*configfile.Error] values. The file is held to a workspace
// manifest's rules (a cwd inside root) unless it is the global manifest,
// opts.ConfigDir/tools.json.
func LoadFile(ctx context.Context, root, path string, opts *Options) ([]*Tool, error) {
	l, err := newLoader(root, opts)
	if err != nil {
		return nil, errors.Join(err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	workspace := true
	if candidates := l.candidates(opts); len(candidates) > 1 {
		workspace = !sameFile(path, candidates[1])
	}
	tools, problems := l.loadFile(ctx, path, workspace)
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return tools, nil
}

// loadFile reads one manifest; workspace says it is a repository's, whose
// tools' cwd must stay inside the root.
func (l *loader) loadFile(ctx context.Context, path string, workspace bool) ([]*Tool, []error) {
	data, err := readManifest(ctx, path)
	if err != nil {
		return nil, []error{err}
	}
	p := newParser(l, path, data)
	p.workspace = workspace
	return p.parse()
}

// sameFile reports whether a and b are one existing file.
func sameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// readManifest reads a manifest the one careful way config files are
// read (configfile.Read: no blocking on a FIFO, a regular file after
// symlinks, bounded, cancellable) and says what is wrong in words that
// name the file and never its content.
func readManifest(ctx context.Context, path string) ([]byte, error) {
	data, err := configfile.Read(ctx, path, MaxManifestSize)
	if err == nil {
		return data, nil
	}
	text := configfile.ReadProblem(ctx, err, MaxManifestSize, "a manifest")
	if errors.Is(err, configfile.ErrTooLarge) {
		text += ", far more than any manifest; is it the right file?"
	}
	return nil, &configfile.Error{File: path, Err: &problem{kind: errUnreadable, cause: err, text: text}}
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
