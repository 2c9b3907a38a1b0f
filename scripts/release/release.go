package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Release tags, in dependency order, every module of the plan whose next
// version is not tagged yet (see [Plan.Releasing]); a module whose listed
// version is tagged is left as it is, and a plan with nothing untagged
// releases nothing. Sibling requirements are not raised: each module
// already requires the lowest version whose API it uses, and release-check
// proved that against the tags and the versions this release creates; a
// requirement no consumer could fetch is refused before any tag is made. A
// module users `go install` is tagged on a commit of its own whose go.mod
// has no replace line (tidied against the tags just made), and the next
// commit puts the development replaces back. With dryRun it only prints
// the steps.
func Release(p *Plan, dryRun bool, w io.Writer) error {
	tags, err := releaseTags(p)
	if err != nil {
		return err
	}
	if errs := p.checkRequirements(tags); len(errs) > 0 {
		return errors.Join(errs...)
	}
	step := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	if dryRun {
		step("# release plan (dry run): nothing is changed")
	}
	releasing := p.Releasing(tags)
	if len(releasing) == 0 {
		step("# nothing to release: every version in versions.yaml is tagged")
		return nil
	}
	for _, m := range p.Modules {
		if !slices.Contains(releasing, m) {
			step("# %s %s is already tagged: not in this release", m.Dir, m.Next)
			continue
		}
		if !slices.Contains(p.Install, m.Dir) || len(m.Replaces) == 0 {
			step("git tag -a %s -m '%s %s'", m.Tag(m.Next), m.Path, m.Next)
			if !dryRun {
				if err := git(p.Root, "tag", "-a", m.Tag(m.Next), "-m", m.Path+" "+m.Next); err != nil {
					return err
				}
			}
			continue
		}
		gomod := filepath.Join(m.Dir, "go.mod")
		step("# %s: users go install it, so its tagged go.mod holds no replace line", m.Dir)
		for _, path := range m.Replaces {
			step("edit %s: drop replace %s", gomod, path)
		}
		step("(cd %s && go mod tidy)   # against the tags above", m.Dir)
		step("git commit -m '%s: release %s without development replaces' %s %s", m.Dir, m.Next, gomod, filepath.Join(m.Dir, "go.sum"))
		step("git tag -a %s -m '%s %s'", m.Tag(m.Next), m.Path, m.Next)
		step("git checkout HEAD~1 -- %s %s && git commit -m '%s: development replaces back after %s'", gomod, filepath.Join(m.Dir, "go.sum"), m.Dir, m.Next)
		if dryRun {
			continue
		}
		if err := releaseInstallable(p, m); err != nil {
			return err
		}
	}
	if !dryRun {
		var pushed []string
		for _, m := range releasing {
			pushed = append(pushed, m.Tag(m.Next))
		}
		step("# push the tags: git push origin %s", strings.Join(pushed, " "))
	}
	return nil
}

func releaseInstallable(p *Plan, m *Module) error {
	work, err := os.MkdirTemp("", "basis-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	c := &checker{p: p, o: CheckOptions{Work: work, Log: io.Discard}, px: &proxy{dir: filepath.Join(work, "proxy")}}
	if err := c.setEnv(); err != nil {
		return err
	}
	if c.tags, err = releaseTags(p); err != nil {
		return err
	}
	if err := c.serveTags(); err != nil {
		return err
	}
	dir := filepath.Join(p.Root, filepath.FromSlash(m.Dir))
	if err := dropReplaces(filepath.Join(dir, "go.mod"), p.Prefix); err != nil {
		return err
	}
	// The tree's go.work must not take part: the tidy is a consumer's.
	if _, err := c.run(dir, nil, "go", "mod", "tidy"); err != nil {
		return err
	}
	files := []string{filepath.Join(m.Dir, "go.mod"), filepath.Join(m.Dir, "go.sum")}
	// go.sum may be new (a module whose only requirements were siblings):
	// what HEAD has of each file is what the restoring commit puts back.
	var had, added []string
	for _, f := range files {
		if git(p.Root, "cat-file", "-e", "HEAD:"+filepath.ToSlash(f)) == nil {
			had = append(had, f)
		} else {
			added = append(added, f)
		}
	}
	steps := [][]string{
		append([]string{"add", "--"}, files...),
		{"commit", "-m", m.Dir + ": release " + m.Next + " without development replaces"},
		{"tag", "-a", m.Tag(m.Next), "-m", m.Path + " " + m.Next},
		append([]string{"checkout", "HEAD~1", "--"}, had...),
	}
	if len(added) > 0 {
		steps = append(steps, append([]string{"rm", "-q", "--"}, added...))
	}
	steps = append(steps, []string{"commit", "-m", m.Dir + ": development replaces back after " + m.Next})
	for _, args := range steps {
		if err := git(p.Root, args...); err != nil {
			return err
		}
	}
	return nil
}

func git(root string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, indent(string(out)))
	}
	return nil
}
