//go:build unix

package workspace

import (
	"context"
	"encoding/json"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/workspace/internal/gitconfig"
)

// localTarget is spawn's wire word for "here" (spawn.LocalTarget): the
// target of a command that runs on this machine. A copy, so that a host
// without spawn links none of it.
const localTarget = "local"

// maxGitDirs bounds the directories one call's git commands are looked
// for repositories in.
const maxGitDirs = 8

// GitFindings lists what the git config (and hooks) of the repository the
// workspace is in make git run (core.fsmonitor, a ! alias, a diff driver),
// by file, line and key: basis check warns about them. Nothing is run to
// find out.
func (w *Workspace) GitFindings(ctx context.Context) []string {
	return w.gitReport(ctx, []gitTarget{{dir: w.root}})
}

// CallGitWarnings lists, for a call that runs git (a spawn command whose
// words name git, or a declared tool whose program is git), what the
// config and hooks of each repository those git commands would use make
// git run: an exact, allowed git status runs core.fsmonitor from
// .git/config. Empty for any other call. Nothing is run to find out.
func (w *Workspace) CallGitWarnings(ctx context.Context, req approver.Request) []string {
	return w.gitReport(ctx, gitTargets(req, w.root))
}

func (w *Workspace) gitReport(ctx context.Context, targets []gitTarget) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range targets {
		gitDir := t.gitDir
		if gitDir == "" {
			var problem *gitconfig.Finding
			gitDir, problem = gitconfig.Repository(ctx, t.dir)
			if problem != nil {
				out = append(out, problem.Format(w.DisplayPath))
			}
		}
		if gitDir == "" || seen[gitDir] {
			continue
		}
		seen[gitDir] = true
		for _, f := range gitconfig.Check(ctx, gitDir, gitconfig.Options{Home: w.getenv("HOME")}) {
			out = append(out, f.Format(w.DisplayPath))
		}
	}
	return out
}

// gitTarget is where a git command looks for its repository: a
// directory to discover it from, or a git directory named outright
// (--git-dir).
type gitTarget struct{ dir, gitDir string }

// gitTargets reads a call's Subject for the git commands it runs and the
// directories they run in: the call's directory, each cd's and each git
// -C's, and each --git-dir. A word that only mentions git (sh -c 'git
// status', a line that could not be analysed) counts too: the call's
// directory is then where git would look.
func gitTargets(req approver.Request, root string) []gitTarget {
	if !mayMentionGit(req.Preview.Subject) {
		return nil // most calls: no decode of the Subject
	}
	return decodedGitTargets(req, root)
}

// decodedGitTargets is gitTargets, always decoding the Subject.
func decodedGitTargets(req approver.Request, root string) []gitTarget {
	var subject struct {
		Body     string     `json:"body"`
		Commands [][]string `json:"commands"`
		Command  []string   `json:"command"`
		Program  string     `json:"program"`
		Cwd      string     `json:"cwd"`
		Target   string     `json:"target"`
	}
	if json.Unmarshal(req.Preview.Subject, &subject) != nil {
		return nil
	}
	if subject.Target != "" && subject.Target != localTarget {
		return nil // git runs on another machine, with its repository there
	}
	base := root
	switch {
	case filepath.IsAbs(req.Preview.Dir):
		base = filepath.Clean(req.Preview.Dir)
	case filepath.IsAbs(subject.Cwd):
		base = filepath.Clean(subject.Cwd)
	}
	runs := mentionsGit(subject.Body) || mentionsGit(subject.Program)
	for _, w := range subject.Command {
		runs = runs || mentionsGit(w)
	}
	targets := []gitTarget{{dir: base}}
	add := func(t gitTarget) {
		if len(targets) < maxGitDirs {
			targets = append(targets, t)
		}
	}
	for _, argv := range subject.Commands {
		if len(argv) == 0 {
			continue
		}
		if programName(argv[0]) == "cd" && len(argv) > 1 {
			add(gitTarget{dir: join(base, argv[1])})
		}
		gitAt := -1
		for i, w := range argv {
			if mentionsGit(w) {
				runs = true
				if gitAt < 0 && strings.EqualFold(programName(w), "git") {
					gitAt = i
				}
			}
		}
		if gitAt >= 0 {
			for _, t := range gitOptionTargets(base, argv[gitAt+1:]) {
				add(t)
			}
		}
	}
	if !runs {
		return nil
	}
	return targets
}

// gitOptionTargets reads git's own options, before its subcommand: each
// -C DIR moves where git starts (relative to the previous one), and
// --git-dir names the repository.
func gitOptionTargets(base string, args []string) []gitTarget {
	var out []gitTarget
	dir := base
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" && i+1 < len(args):
			i++
			dir = join(dir, args[i])
			out = append(out, gitTarget{dir: dir})
		case a == "--git-dir" && i+1 < len(args):
			i++
			out = append(out, gitTarget{gitDir: join(dir, args[i])})
		case strings.HasPrefix(a, "--git-dir="):
			out = append(out, gitTarget{gitDir: join(dir, strings.TrimPrefix(a, "--git-dir="))})
		case a == "-c" || a == "--exec-path" || a == "--namespace" || a == "--work-tree" || a == "--config-env":
			i++ // an option with a value of its own
		case !strings.HasPrefix(a, "-"):
			return out // the subcommand
		}
	}
	return out
}

func join(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// mayMentionGit reports whether a Subject's JSON could name git in any
// of its strings: it holds the letters g, i, t in a row, in any case, or
// a backslash, behind which an escape (\u0067) could spell them.
// mentionsGit only ever finds what this does.
func mayMentionGit(subject []byte) bool {
	for i, c := range subject {
		if c == '\\' {
			return true
		}
		if c|0x20 == 'g' && i+2 < len(subject) && subject[i+1]|0x20 == 'i' && subject[i+2]|0x20 == 't' {
			return true
		}
	}
	return false
}

// mentionsGit reports whether text holds git as a word a shell could run:
// git, /usr/bin/git, or git inside sh -c 'cd x && git status'.
func mentionsGit(text string) bool {
	for _, word := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/+-", r))
	}) {
		if strings.EqualFold(programName(word), "git") {
			return true
		}
	}
	return false
}

// warnAbout makes every question appr is asked carry the call's git
// warnings (approver.Request.Warnings), so the terminal, an MCP client's
// form and a hook all show them.
func (w *Workspace) warnAbout(appr approver.Approver) approver.Approver {
	if appr == nil {
		return nil
	}
	ask := func(ctx context.Context, req approver.Request) (approver.Answer, error) {
		req.Warnings = slices.Concat(req.Warnings, w.CallGitWarnings(ctx, req))
		return appr.Approve(ctx, req)
	}
	// Reading a repository's git config waits on nothing: the wrapper
	// answers at once when appr does.
	if approver.IsImmediate(appr) {
		return approver.ImmediateFunc(ask)
	}
	return approver.ApproverFunc(ask)
}

// programName is the name a command's program goes by: the last element
// of argv0 (/usr/bin/git is git), with a version after the name taken off
// (git2.43 is git); any mkfs variant is mkfs. It keeps its case; callers
// fold ASCII case, since on a case-insensitive file system GIT runs git.
func programName(argv0 string) string {
	name := path.Base(strings.TrimRight(argv0, "/"))
	if name == "/" || name == "." {
		return name
	}
	if strings.HasPrefix(strings.ToLower(name), "mkfs") {
		return "mkfs"
	}
	end := len(name)
	for end > 0 && (name[end-1] >= '0' && name[end-1] <= '9' || name[end-1] == '.') {
		end--
	}
	if end == len(name) || end == 0 || name[end] == '.' {
		// No version, all version, or a dot first (run.3 is no version).
		return name
	}
	if name[end-1] == '-' && end > 1 {
		end--
	}
	return name[:end]
}
