package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// CheckOptions says which steps of [Check] run beyond the first two.
type CheckOptions struct {
	// Work is a scratch directory; it must be empty or absent (Check
	// makes it).
	Work string
	// Tools is a directory holding gorelease and apidiff; empty skips
	// both.
	Tools string
	// Hosts are host modules (directories with a go.mod and no replace
	// lines) built and run as consumers; see [Host].
	Hosts []Host
	// Install names a module whose main package `go install PATH@NEXT`
	// must install and whose binary must run with InstallArgs, when the
	// module is in this release.
	Install     string
	InstallArgs []string
	Log         io.Writer
}

// Host is a program outside the workspace that imports some modules the
// way a stranger's program would.
type Host struct {
	Dir string
	// Forbidden lists module path prefixes that must not appear in the
	// host's `go list -m all`.
	Forbidden []string
	// ForbiddenPackages lists package path prefixes that must not appear
	// in `go list -deps` of the host's packages.
	ForbiddenPackages []string
	// Output must appear in what the host prints when it runs with no
	// arguments in its own directory; used when Runs is empty.
	Output string
	// Runs are the host's runs, each in a directory of the host's copy:
	// a fixture workspace the host is run in, say.
	Runs []HostRun
}

// HostRun is one run of a host program.
type HostRun struct {
	// Dir is where it runs, relative to the host's directory.
	Dir  string
	Args []string
	// Output must appear in what the host prints.
	Output string
	// File, relative to Dir, must hold FileHolds after the run (an audit
	// file the run appended to, say).
	File, FileHolds string
	// Absent, relative to Dir, must not exist after the run (what a
	// sandboxed program tried to write outside its workspace).
	Absent string
}

type checker struct {
	p     *Plan
	o     CheckOptions
	px    *proxy
	env   []string
	tags  map[string][]string
	built map[string]string // module dir -> consumer copy
	// releasing are the modules this release makes.
	releasing []*Module
}

// Check proves every module this release makes (see [Plan.Releasing]) can
// be fetched and built by a consumer: no sibling requirement at a version
// no release can serve; and, with the siblings' replace lines dropped and
// a file proxy serving every module's tags from git history plus the tree
// of each module being released at its next version, each one is tidy as
// a consumer sees it and builds and vets. Then, as configured, gorelease
// and apidiff against the last tag, host programs (raised to the versions
// being released), and `go install` of the command when it is being
// released. A release of nothing passes; [Check] logs it.
func Check(p *Plan, o CheckOptions) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	tags, err := releaseTags(p)
	if err != nil {
		return err
	}
	if errs := p.checkRequirements(tags); len(errs) > 0 {
		return errors.Join(errs...)
	}
	releasing := p.Releasing(tags)
	for _, m := range p.Modules {
		if !slices.Contains(releasing, m) {
			fmt.Fprintf(o.Log, "release-check: %s %s is tagged: not in this release\n", m.Dir, m.Next)
		}
	}
	if len(releasing) == 0 {
		fmt.Fprintln(o.Log, "release-check: nothing to release: every version in versions.yaml is tagged")
		return nil
	}
	if o.Work, err = workDir(o.Work); err != nil {
		return err
	}
	c := &checker{p: p, o: o, px: &proxy{dir: filepath.Join(o.Work, "proxy")}, tags: tags, built: map[string]string{}, releasing: releasing}
	if err := c.setEnv(); err != nil {
		return err
	}
	if err := c.serveTags(); err != nil {
		return err
	}
	var errs []error
	for _, m := range releasing {
		fmt.Fprintf(o.Log, "release-check: %s@%s as a consumer sees it\n", m.Path, m.Next)
		if err := c.consumer(m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Dir, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if o.Tools != "" {
		for _, m := range releasing {
			if err := c.compare(m); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", m.Dir, err))
			}
		}
	}
	for _, h := range o.Hosts {
		fmt.Fprintf(o.Log, "release-check: host %s\n", h.Dir)
		if err := c.host(h); err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Dir, err))
		}
	}
	if o.Install != "" {
		if err := c.install(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// serveTags puts every tagged version of every module of the plan in the
// proxy, as git history holds it.
func (c *checker) serveTags() error {
	for _, m := range c.p.Modules {
		for _, v := range c.tags[m.Dir] {
			src, err := extractTag(c.p, m, v, filepath.Join(c.o.Work, "tags", m.Dir+"@"+v))
			if err != nil {
				return err
			}
			if err := c.px.add(m.Path, v, src); err != nil {
				return err
			}
		}
	}
	return nil
}

// workDir makes the scratch directory dir if it is absent and returns it
// absolute: the go commands Check starts run in other directories, and go
// refuses a relative GOMODCACHE.
func workDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no work directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("work directory: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("making the work directory: %w", err)
	}
	return abs, nil
}

// setEnv makes the environment every consumer command runs in: no
// workspace, a module cache of its own (the tree's versions change from
// run to run under one version number), and the file proxy first, then
// this machine's module cache and usual proxy for everything else.
func (c *checker) setEnv() error {
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return fmt.Errorf("go env printed %q", out)
	}
	upstream := "file://" + filepath.ToSlash(filepath.Join(lines[0], "cache", "download"))
	if lines[1] != "" && lines[1] != "off" {
		upstream += "," + lines[1]
	}
	drop := []string{"GOWORK", "GOFLAGS", "GOPROXY", "GOMODCACHE", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GONOPROXY", "GOTOOLCHAIN", "GOBIN"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env,
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY="+c.px.url()+","+upstream,
		"GOMODCACHE="+filepath.Join(c.o.Work, "modcache"),
		// Sums of the tree's versions cannot be in any checksum database.
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
	)
	return nil
}

// run runs a go command in dir under the consumer environment.
func (c *checker) run(dir string, extraEnv []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(c.env), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, indent(out.String()))
	}
	return out.String(), nil
}

// consumer copies m as its module zip would hold it, drops its sibling
// replace lines, checks that tidying adds or moves no requirement, builds
// and vets it, then serves it from the proxy at its next version.
func (c *checker) consumer(m *Module) error {
	src := filepath.Join(c.p.Root, filepath.FromSlash(m.Dir))
	dest := filepath.Join(c.o.Work, "src", m.Dir+"@"+m.Next)
	if err := copyModule(m.Path, m.Next, src, dest, filepath.Join(c.o.Work, "tmp.zip")); err != nil {
		return err
	}
	gomod := filepath.Join(dest, "go.mod")
	before, err := readRequires(gomod)
	if err != nil {
		return err
	}
	if err := dropReplaces(gomod, c.p.Prefix); err != nil {
		return err
	}
	if _, err := c.run(dest, nil, "go", "mod", "tidy"); err != nil {
		return err
	}
	after, err := readRequires(gomod)
	if err != nil {
		return err
	}
	for path, v := range after {
		if w, ok := before[path]; !ok || w != v {
			return fmt.Errorf("go.mod is not tidy as a consumer sees it: tidying requires %s %s (go.mod says %q); add or fix that requirement", path, v, w)
		}
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		if _, err := c.run(dest, nil, "go", args...); err != nil {
			return err
		}
	}
	c.built[m.Dir] = dest
	return c.px.add(m.Path, m.Next, dest)
}

// compare runs gorelease on the consumer copy against the module's last
// tag and, when there is one, apidiff: an incompatible change fails the
// check for a module at v1 or later and is reported below v1.
func (c *checker) compare(m *Module) error {
	base := "none"
	if t := c.tags[m.Dir]; len(t) > 0 {
		base = t[len(t)-1]
	}
	dest := c.built[m.Dir]
	out, err := c.run(dest, nil, filepath.Join(c.o.Tools, "gorelease"), "-base="+base, "-version="+m.Next)
	fmt.Fprintf(c.o.Log, "gorelease %s (base %s):\n%s", m.Dir, base, indent(out))
	stable := semver.Major(m.Next) != "v0"
	if err != nil && stable {
		return fmt.Errorf("gorelease: %w", err)
	}
	if base == "none" {
		return nil
	}
	old := filepath.Join(c.o.Work, "tags", m.Dir+"@"+base, filepath.FromSlash(m.Dir))
	// The tag's development replaces point outside the extracted module;
	// a consumer of the tag never sees them.
	if err := dropReplaces(filepath.Join(old, "go.mod"), c.p.Prefix); err != nil {
		return err
	}
	apidiff := filepath.Join(c.o.Tools, "apidiff")
	oldExport, newExport := filepath.Join(c.o.Work, "old.export"), filepath.Join(c.o.Work, "new.export")
	if _, err := c.run(old, nil, apidiff, "-m", "-w", oldExport, m.Path); err != nil {
		return err
	}
	if _, err := c.run(dest, nil, apidiff, "-m", "-w", newExport, m.Path); err != nil {
		return err
	}
	diff, err := c.run(dest, nil, apidiff, "-m", "-incompatible", oldExport, newExport)
	if err != nil {
		return err
	}
	if strings.TrimSpace(diff) != "" {
		if stable {
			return fmt.Errorf("incompatible API changes since %s:\n%s", base, indent(diff))
		}
		fmt.Fprintf(c.o.Log, "apidiff %s: incompatible changes since %s (allowed below v1):\n%s", m.Dir, base, indent(diff))
	}
	return nil
}

// host builds and runs a host program against the proxy and checks its
// module graph and package list.
func (c *checker) host(h Host) error {
	dest := filepath.Join(c.o.Work, "hosts", filepath.Base(h.Dir))
	if err := copyTree(filepath.Join(c.p.Root, filepath.FromSlash(h.Dir)), dest); err != nil {
		return err
	}
	if _, err := c.run(dest, nil, "go", "mod", "tidy"); err != nil {
		return err
	}
	mods, err := c.run(dest, nil, "go", "list", "-m", "all")
	if err != nil {
		return err
	}
	// A stranger upgrading: every module of this release the host uses,
	// raised to the version being released.
	var upgrade []string
	for _, m := range c.releasing {
		if slices.ContainsFunc(strings.Split(mods, "\n"), func(line string) bool { return strings.HasPrefix(line, m.Path+" ") }) {
			upgrade = append(upgrade, m.Path+"@"+m.Next)
		}
	}
	if len(upgrade) > 0 {
		if _, err := c.run(dest, nil, "go", append([]string{"get"}, upgrade...)...); err != nil {
			return err
		}
		if mods, err = c.run(dest, nil, "go", "list", "-m", "all"); err != nil {
			return err
		}
	}
	pkgs, err := c.run(dest, nil, "go", "list", "-deps", "./...")
	if err != nil {
		return err
	}
	var errs []error
	for _, line := range strings.Fields(mods) {
		for _, f := range h.Forbidden {
			if strings.HasPrefix(line, f) {
				errs = append(errs, fmt.Errorf("module %s is in the host's module graph", line))
			}
		}
	}
	for _, line := range strings.Fields(pkgs) {
		for _, f := range h.ForbiddenPackages {
			if strings.HasPrefix(line, f) {
				errs = append(errs, fmt.Errorf("package %s is linked into the host", line))
			}
		}
	}
	bin := filepath.Join(dest, "host.bin")
	if _, err := c.run(dest, nil, "go", "build", "-o", bin, "."); err != nil {
		return err
	}
	runs := h.Runs
	if len(runs) == 0 {
		runs = []HostRun{{Output: h.Output}}
	}
	for _, r := range runs {
		dir := filepath.Join(dest, filepath.FromSlash(r.Dir))
		out, err := c.run(dir, nil, bin, r.Args...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !strings.Contains(out, r.Output) {
			errs = append(errs, fmt.Errorf("the host %s printed %q, want it to contain %q", strings.Join(r.Args, " "), out, r.Output))
		}
		if r.File != "" {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.File)))
			if err != nil {
				errs = append(errs, err)
			} else if !strings.Contains(string(data), r.FileHolds) {
				errs = append(errs, fmt.Errorf("after the host %s, %s holds %q, want it to contain %q", strings.Join(r.Args, " "), r.File, data, r.FileHolds))
			}
		}
		if r.Absent != "" {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(r.Absent))); err == nil {
				errs = append(errs, fmt.Errorf("the host %s made %s", strings.Join(r.Args, " "), r.Absent))
			}
		}
	}
	return errors.Join(errs...)
}

// install runs `go install PATH@NEXT` outside any module, as a user would,
// and runs the binary.
func (c *checker) install() error {
	m := c.p.byPath[c.o.Install]
	if m == nil {
		return fmt.Errorf("install: %s is not in versions.yaml", c.o.Install)
	}
	if !slices.Contains(c.releasing, m) {
		fmt.Fprintf(c.o.Log, "release-check: %s is not in this release: no go install\n", m.Dir)
		return nil
	}
	bin := filepath.Join(c.o.Work, "bin")
	outside := filepath.Join(c.o.Work, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(c.o.Log, "release-check: go install %s@%s\n", m.Path, m.Next)
	// go install pkg@version refuses -mod; it runs in module-aware mode
	// outside any module.
	env := []string{"GOBIN=" + bin, "GOFLAGS=-modcacherw"}
	if _, err := c.run(outside, env, "go", "install", m.Path+"@"+m.Next); err != nil {
		return fmt.Errorf("go install: %w", err)
	}
	if _, err := c.run(outside, nil, filepath.Join(bin, filepath.Base(m.Path)), c.o.InstallArgs...); err != nil {
		return fmt.Errorf("the installed binary: %w", err)
	}
	return nil
}

// copyModule copies exactly what the module zip of src holds into dest.
func copyModule(path, version, src, dest, tmpZip string) error {
	f, err := os.Create(tmpZip)
	if err != nil {
		return err
	}
	defer os.Remove(tmpZip)
	mv := module.Version{Path: path, Version: version}
	if err := modzip.CreateFromDir(f, mv, src); err != nil {
		f.Close()
		return fmt.Errorf("zipping: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return modzip.Unzip(dest, mv, tmpZip)
}

func readRequires(gomod string) (map[string]string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return nil, err
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out, nil
}

// dropReplaces removes the replace lines of siblings, as a consumer never
// sees them.
func dropReplaces(gomod, prefix string) error {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		return err
	}
	for _, r := range slices.Clone(f.Replace) {
		if strings.HasPrefix(r.Old.Path, prefix+"/") {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(gomod, out, 0o644)
}

func copyTree(src, dest string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dest, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}
