package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"gopkg.in/yaml.v3"
)

// Module is one released module of the plan.
type Module struct {
	Dir  string // relative to the repository root, slash-separated
	Path string // module path
	Next string // the version its next release gets
	// Requires maps each sibling's module path to the version required.
	Requires map[string]string
	// Replaces lists the sibling module paths this go.mod replaces.
	Replaces []string
	file     *modfile.File
}

// Plan is versions.yaml read against the tree: every released module, in
// dependency order (a module after every sibling it requires).
type Plan struct {
	Root    string
	Prefix  string
	Modules []*Module
	// Install lists the module directories users `go install`.
	Install []string
	byPath  map[string]*Module
}

type versionsFile struct {
	Prefix  string            `yaml:"prefix"`
	Modules map[string]string `yaml:"modules"`
	Install []string          `yaml:"install"`
}

// LoadPlan reads root/versions.yaml and the go.mod of every module it
// lists.
func LoadPlan(root string) (*Plan, error) {
	return LoadPlanFile(root, filepath.Join(root, "versions.yaml"))
}

// LoadPlanFile is [LoadPlan] with the release plan read from file.
func LoadPlanFile(root, file string) (*Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var vf versionsFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&vf); err != nil {
		return nil, fmt.Errorf("versions.yaml: %w", err)
	}
	if vf.Prefix == "" || len(vf.Modules) == 0 {
		return nil, fmt.Errorf("versions.yaml: needs a prefix and at least one module")
	}
	p := &Plan{Root: root, Prefix: vf.Prefix, Install: vf.Install, byPath: map[string]*Module{}}
	for _, dir := range vf.Install {
		if _, ok := vf.Modules[dir]; !ok {
			return nil, fmt.Errorf("versions.yaml: install: %s is not a released module", dir)
		}
	}
	for dir, next := range vf.Modules {
		if !semver.IsValid(next) || semver.Prerelease(next) != "" || semver.Build(next) != "" {
			return nil, fmt.Errorf("versions.yaml: %s: %q is not a release version such as v0.1.0", dir, next)
		}
		gomod := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, fmt.Errorf("versions.yaml: %s: %w", dir, err)
		}
		f, err := modfile.Parse(gomod, data, nil)
		if err != nil {
			return nil, err
		}
		m := &Module{Dir: dir, Path: f.Module.Mod.Path, Next: next, Requires: map[string]string{}, file: f}
		if want := vf.Prefix + "/" + dir; m.Path != want {
			return nil, fmt.Errorf("%s: module path is %s, want %s", gomod, m.Path, want)
		}
		if major := semver.Major(next); major != "v0" && major != "v1" && !strings.HasSuffix(m.Path, "/"+major) {
			return nil, fmt.Errorf("versions.yaml: %s: version %s needs the module path to end in /%s", dir, next, major)
		}
		p.Modules = append(p.Modules, m)
		p.byPath[m.Path] = m
	}
	for _, m := range p.Modules {
		for _, r := range m.file.Require {
			if strings.HasPrefix(r.Mod.Path, vf.Prefix+"/") {
				m.Requires[r.Mod.Path] = r.Mod.Version
			}
		}
		for _, r := range m.file.Replace {
			if strings.HasPrefix(r.Old.Path, vf.Prefix+"/") {
				m.Replaces = append(m.Replaces, r.Old.Path)
			}
		}
	}
	return p, p.sort()
}

// sort orders the modules so each comes after the siblings it requires,
// by directory among equals, and refuses a cycle.
func (p *Plan) sort() error {
	slices.SortFunc(p.Modules, func(a, b *Module) int { return cmp.Compare(a.Dir, b.Dir) })
	var out []*Module
	state := map[*Module]int{} // 1 visiting, 2 done
	var visit func(m *Module) error
	visit = func(m *Module) error {
		switch state[m] {
		case 1:
			return fmt.Errorf("%s: sibling requirements form a cycle", m.Dir)
		case 2:
			return nil
		}
		state[m] = 1
		for _, path := range slices.Sorted(mapsKeys(m.Requires)) {
			if dep := p.byPath[path]; dep != nil {
				if err := visit(dep); err != nil {
					return err
				}
			}
		}
		state[m] = 2
		out = append(out, m)
		return nil
	}
	for _, m := range p.Modules {
		if err := visit(m); err != nil {
			return err
		}
	}
	p.Modules = out
	return nil
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Tag is the git tag of module m at version v: "<dir>/<v>".
func (m *Module) Tag(v string) string { return m.Dir + "/" + v }

// Releasing lists, in dependency order, the modules this release makes:
// those whose next version in versions.yaml is not tagged yet. A module
// whose listed version is tagged is not part of the release; consumers get
// its tag.
func (p *Plan) Releasing(tags map[string][]string) []*Module {
	var out []*Module
	for _, m := range p.Modules {
		if !slices.Contains(tags[m.Dir], m.Next) {
			out = append(out, m)
		}
	}
	return out
}

// checkRequirements reports every sibling requirement of a module being
// released that no consumer could fetch: a pseudo-version, a module the
// plan does not release, or a version that is neither tagged nor the
// sibling's next version in this release.
func (p *Plan) checkRequirements(tags map[string][]string) []error {
	var errs []error
	releasing := p.Releasing(tags)
	for _, m := range releasing {
		for _, path := range slices.Sorted(mapsKeys(m.Requires)) {
			v := m.Requires[path]
			dep := p.byPath[path]
			switch {
			case module.IsPseudoVersion(v):
				errs = append(errs, fmt.Errorf("%s: requires %s at the pseudo-version %s, which no release can serve; require a tagged version (%s)", m.Dir, path, v, p.nextOf(path)))
			case dep == nil:
				errs = append(errs, fmt.Errorf("%s: requires %s, which versions.yaml does not release", m.Dir, path))
			case slices.Contains(tags[dep.Dir], v):
			case v == dep.Next && slices.Contains(releasing, dep):
			default:
				errs = append(errs, fmt.Errorf("%s: requires %s %s, which is neither tagged nor being released now (%s); release it too (%s: %s in versions.yaml) or require a tagged version", m.Dir, path, v, p.releaseOf(dep, tags), dep.Dir, v))
			}
		}
	}
	return errs
}

// releaseOf says what this release does with dep, for error messages.
func (p *Plan) releaseOf(dep *Module, tags map[string][]string) string {
	if slices.Contains(tags[dep.Dir], dep.Next) {
		return fmt.Sprintf("versions.yaml lists %s, already tagged", dep.Next)
	}
	return "this release makes " + dep.Next
}

func (p *Plan) nextOf(path string) string {
	if m := p.byPath[path]; m != nil {
		return m.Next
	}
	return "a tagged version"
}
