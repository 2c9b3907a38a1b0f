package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repo makes a git repository of files, committed, in a new directory.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	write(t, root, files)
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"},
	} {
		gitT(t, root, args...)
	}
	return root
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gitT(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

const versions = `prefix: example.com/fix
modules:
  a: %A%
  b: v0.1.0
install:
  - b
`

func plan(t *testing.T, root string) *Plan {
	t.Helper()
	p, err := LoadPlan(root)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func check(t *testing.T, root string) error {
	t.Helper()
	var log bytes.Buffer
	err := Check(plan(t, root), CheckOptions{Work: t.TempDir(), Log: &log})
	t.Logf("check log:\n%s", log.String())
	return err
}

// twoModules is module a (a library) and b (a command using it).
func twoModules(aVersion, bRequires, bUses string) map[string]string {
	return map[string]string{
		"versions.yaml": strings.ReplaceAll(versions, "%A%", aVersion),
		"a/go.mod":      "module example.com/fix/a\n\ngo 1.26.0\n",
		"a/a.go":        "package a\n\n// A is in every version.\nfunc A() int { return 1 }\n",
		"b/go.mod":      "module example.com/fix/b\n\ngo 1.26.0\n\nrequire example.com/fix/a " + bRequires + "\n\nreplace example.com/fix/a => ../a\n",
		"b/main.go":     "package main\n\nimport \"example.com/fix/a\"\n\nfunc main() { println(a." + bUses + "()) }\n",
	}
}

func TestCheckPasses(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.1.0", "A"))
	if err := check(t, root); err != nil {
		t.Fatalf("a sound tree fails the check: %v", err)
	}
}

// The scratch directory -work names need not exist, and may be relative
// to where the tool runs (the go commands it starts run elsewhere).
func TestCheckMakesItsWorkDirectory(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.1.0", "A"))
	tests := []struct {
		name string
		work func(t *testing.T) string
	}{
		{"absent", func(t *testing.T) string { return filepath.Join(t.TempDir(), "not", "yet") }},
		{"relative and absent", func(t *testing.T) string {
			t.Chdir(t.TempDir())
			return filepath.Join("not", "yet")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := tt.work(t)
			var log bytes.Buffer
			err := Check(plan(t, root), CheckOptions{Work: work, Log: &log})
			t.Logf("check log:\n%s", log.String())
			if err != nil {
				t.Fatalf("Check with Work %q = %v; want the directory made", work, err)
			}
			if _, err := os.Stat(filepath.Join(work, "modcache")); err != nil {
				t.Errorf("no module cache in the work directory: %v", err)
			}
		})
	}
}

func TestCheckRefusesPseudoVersion(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.0.0-00010101000000-000000000000", "A"))
	err := check(t, root)
	if err == nil || !strings.Contains(err.Error(), "b: requires example.com/fix/a at the pseudo-version v0.0.0-00010101000000-000000000000, which no release can serve") {
		t.Fatalf("Check = %v; want the pseudo-version named", err)
	}
}

// An API the required sibling version does not have: a/v0.1.0 is tagged
// with A only; the tree adds B for a's next release, v0.2.0; b uses B but
// still requires v0.1.0. Inside the workspace (or with b's replace) that
// builds; a consumer gets a v0.1.0 and cannot.
func TestCheckRefusesAPIMissingFromRequiredVersion(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.1.0", "A"))
	gitT(t, root, "tag", "a/v0.1.0")
	write(t, root, map[string]string{
		"a/b.go":        "package a\n\n// B is new in v0.2.0.\nfunc B() int { return 2 }\n",
		"b/main.go":     "package main\n\nimport \"example.com/fix/a\"\n\nfunc main() { println(a.B()) }\n",
		"versions.yaml": strings.ReplaceAll(versions, "%A%", "v0.2.0"),
	})
	err := check(t, root)
	if err == nil || !strings.Contains(err.Error(), "undefined: a.B") {
		t.Fatalf("Check = %v; want b's use of a.B refused", err)
	}
	// Requiring the version that has B is the fix.
	write(t, root, map[string]string{
		"b/go.mod": "module example.com/fix/b\n\ngo 1.26.0\n\nrequire example.com/fix/a v0.2.0\n\nreplace example.com/fix/a => ../a\n",
	})
	if err := check(t, root); err != nil {
		t.Fatalf("with the right requirement the check still fails: %v", err)
	}
}

func TestCheckRefusesUntidyRequirement(t *testing.T) {
	files := twoModules("v0.1.0", "v0.1.0", "A")
	// b imports a without requiring it: only the workspace hides that.
	files["b/go.mod"] = "module example.com/fix/b\n\ngo 1.26.0\n"
	root := repo(t, files)
	err := check(t, root)
	if err == nil || !strings.Contains(err.Error(), "not tidy as a consumer sees it: tidying requires example.com/fix/a v0.1.0") {
		t.Fatalf("Check = %v; want the missing requirement named", err)
	}
}

func TestReleaseDryRun(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.1.0", "A"))
	var out bytes.Buffer
	if err := Release(plan(t, root), true, &out); err != nil {
		t.Fatal(err)
	}
	want := `# release plan (dry run): nothing is changed
git tag -a a/v0.1.0 -m 'example.com/fix/a v0.1.0'
# b: users go install it, so its tagged go.mod holds no replace line
edit b/go.mod: drop replace example.com/fix/a
(cd b && go mod tidy)   # against the tags above
git commit -m 'b: release v0.1.0 without development replaces' b/go.mod b/go.sum
git tag -a b/v0.1.0 -m 'example.com/fix/b v0.1.0'
git checkout HEAD~1 -- b/go.mod b/go.sum && git commit -m 'b: development replaces back after v0.1.0'
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}
}

// A real release in a scratch repository: tags in order, and the
// installable module's tag holds no replace line while the branch keeps
// its development replaces.
func TestRelease(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.1.0", "A"))
	gitT(t, root, "config", "user.name", "t")
	gitT(t, root, "config", "user.email", "t@example.com")
	if err := Release(plan(t, root), false, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	tagged, err := exec.Command("git", "-C", root, "show", "b/v0.1.0:b/go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tagged), "replace") || !strings.Contains(string(tagged), "require example.com/fix/a v0.1.0") {
		t.Errorf("tagged b/go.mod:\n%s", tagged)
	}
	head, _ := os.ReadFile(filepath.Join(root, "b", "go.mod"))
	if !strings.Contains(string(head), "replace example.com/fix/a => ../a") {
		t.Errorf("the branch lost its development replace:\n%s", head)
	}
	tags, _ := exec.Command("git", "-C", root, "tag", "--list").Output()
	if diff := cmp.Diff("a/v0.1.0\nb/v0.1.0\n", string(tags)); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	// Released once, the same versions are a release of nothing: the
	// check and the release say so and succeed.
	var log bytes.Buffer
	if err := Check(plan(t, root), CheckOptions{Work: t.TempDir(), Log: &log}); err != nil || !strings.Contains(log.String(), "nothing to release") {
		t.Errorf("check after the release = %v, logged:\n%s\nwant nothing to release", err, log.String())
	}
	var again bytes.Buffer
	if err := Release(plan(t, root), false, &again); err != nil || !strings.Contains(again.String(), "nothing to release") {
		t.Errorf("release after the release = %v, printed:\n%s\nwant nothing to release", err, again.String())
	}
	if tags, _ := exec.Command("git", "-C", root, "tag", "--list").Output(); string(tags) != "a/v0.1.0\nb/v0.1.0\n" {
		t.Errorf("a release of nothing made tags:\n%s", tags)
	}
}

// threeModules is contract, declared (requiring contract) and cmd/basis (a
// command requiring declared), under a prefix of their own.
func threeModules() map[string]string {
	return map[string]string{
		"versions.yaml":     "prefix: example.com/fix\nmodules:\n  contract: v0.1.0\n  declared: v0.1.0\n  cmd/basis: v0.1.0\ninstall:\n  - cmd/basis\n",
		"contract/go.mod":   "module example.com/fix/contract\n\ngo 1.26.0\n",
		"contract/c.go":     "package contract\n\n// Name is in every version.\nfunc Name() string { return \"contract\" }\n",
		"declared/go.mod":   "module example.com/fix/declared\n\ngo 1.26.0\n\nrequire example.com/fix/contract v0.1.0\n\nreplace example.com/fix/contract => ../contract\n",
		"declared/d.go":     declaredAt("v0.1.0"),
		"cmd/basis/go.mod":  basisGoMod("v0.1.0"),
		"cmd/basis/main.go": "package main\n\nimport \"example.com/fix/declared\"\n\nfunc main() { println(declared.Describe()) }\n",
	}
}

func declaredAt(v string) string {
	return "package declared\n\nimport \"example.com/fix/contract\"\n\n// Describe names the version.\nfunc Describe() string { return contract.Name() + \" declared " + v + "\" }\n"
}

func basisGoMod(declared string) string {
	return "module example.com/fix/cmd/basis\n\ngo 1.26.0\n\nrequire example.com/fix/declared " + declared + "\n\nrequire example.com/fix/contract v0.1.0 // indirect\n\nreplace (\n\texample.com/fix/contract => ../../contract\n\texample.com/fix/declared => ../../declared\n)\n"
}

func setVersions(t *testing.T, root string, versions map[string]string) {
	t.Helper()
	text := "prefix: example.com/fix\nmodules:\n"
	for _, dir := range []string{"contract", "declared", "cmd/basis"} {
		text += "  " + dir + ": " + versions[dir] + "\n"
	}
	write(t, root, map[string]string{"versions.yaml": text + "install:\n  - cmd/basis\n"})
}

func commitAll(t *testing.T, root, msg string) {
	t.Helper()
	gitT(t, root, "add", "-A")
	gitT(t, root, "commit", "-q", "-m", msg)
}

func output(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// stranger is the environment of someone outside the repository: no
// workspace, a module cache of their own, and a proxy that serves exactly
// the repository's tags (as a public proxy would after the push), nothing
// else and no network.
func stranger(t *testing.T, root string) []string {
	t.Helper()
	work := t.TempDir()
	p, px := plan(t, root), &proxy{dir: filepath.Join(work, "proxy")}
	tags, err := releaseTags(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Modules {
		for _, v := range tags[m.Dir] {
			src, err := extractTag(p, m, v, filepath.Join(work, "tags", m.Dir+"@"+v))
			if err != nil {
				t.Fatal(err)
			}
			if err := px.add(m.Path, v, src); err != nil {
				t.Fatal(err)
			}
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "GO") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GOWORK=off", "GOPROXY="+px.url(), "GOSUMDB=off", "GOTOOLCHAIN=local",
		"GOMODCACHE="+filepath.Join(work, "modcache"), "GOFLAGS=-mod=mod -modcacherw",
		"GOCACHE="+filepath.Join(work, "gocache"), "GOPATH="+filepath.Join(work, "gopath"))
}

// Two releases, the second of one module: everything at v0.1.0, then a
// patch to declared alone at v0.1.1 while cmd/basis, not released again,
// still requires declared v0.1.0. A stranger then gets both.
func TestReleaseOneModuleAfterAll(t *testing.T) {
	root := repo(t, threeModules())
	gitT(t, root, "config", "user.name", "t")
	gitT(t, root, "config", "user.email", "t@example.com")
	if err := check(t, root); err != nil {
		t.Fatalf("first check: %v", err)
	}
	if err := Release(plan(t, root), false, &bytes.Buffer{}); err != nil {
		t.Fatalf("first release: %v", err)
	}

	write(t, root, map[string]string{"declared/d.go": declaredAt("v0.1.1")})
	setVersions(t, root, map[string]string{"contract": "v0.1.0", "declared": "v0.1.1", "cmd/basis": "v0.1.0"})
	commitAll(t, root, "declared: a patch")
	// A host that requires declared v0.1.0 is checked with the version
	// being released, as a stranger upgrading would build it.
	write(t, root, map[string]string{
		"hosts/h/go.mod":  "module example.com/host\n\ngo 1.26.0\n\nrequire example.com/fix/declared v0.1.0\n",
		"hosts/h/main.go": "package main\n\nimport \"example.com/fix/declared\"\n\nfunc main() { println(declared.Describe()) }\n",
		// A host run in a fixture directory of its own, with arguments,
		// leaving a file there.
		"hosts/r/go.mod":          "module example.com/runs\n\ngo 1.26.0\n",
		"hosts/r/main.go":         "package main\n\nimport \"os\"\n\nfunc main() {\n\tdata, _ := os.ReadFile(\"fixture.txt\")\n\tos.WriteFile(\"out.txt\", []byte(\"wrote \"+os.Args[1]), 0o644)\n\tprintln(string(data), os.Args[1])\n}\n",
		"hosts/r/fix/fixture.txt": "in the fixture",
	})
	commitAll(t, root, "a host")
	var log bytes.Buffer
	host := Host{Dir: "hosts/h", Output: "contract declared v0.1.1", Forbidden: []string{"example.com/fix/cmd/basis"}}
	runs := Host{Dir: "hosts/r", Runs: []HostRun{{Dir: "fix", Args: []string{"hello"}, Output: "in the fixture hello", File: "out.txt", FileHolds: "wrote hello", Absent: "../escaped"}}}
	if err := Check(plan(t, root), CheckOptions{Work: t.TempDir(), Log: &log, Hosts: []Host{host, runs}}); err != nil {
		t.Fatalf("check of declared alone: %v\n%s", err, log.String())
	}
	for _, want := range []string{"contract v0.1.0 is tagged: not in this release", "cmd/basis v0.1.0 is tagged: not in this release", "example.com/fix/declared@v0.1.1 as a consumer sees it"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the check's log lacks %q:\n%s", want, log.String())
		}
	}
	var dry bytes.Buffer
	if err := Release(plan(t, root), true, &dry); err != nil {
		t.Fatal(err)
	}
	wantDry := `# release plan (dry run): nothing is changed
# contract v0.1.0 is already tagged: not in this release
git tag -a declared/v0.1.1 -m 'example.com/fix/declared v0.1.1'
# cmd/basis v0.1.0 is already tagged: not in this release
`
	if diff := cmp.Diff(wantDry, dry.String()); diff != "" {
		t.Errorf("dry run of declared alone (-want +got):\n%s", diff)
	}
	head := output(t, root, nil, "git", "-C", root, "rev-parse", "HEAD")
	if err := Release(plan(t, root), false, &bytes.Buffer{}); err != nil {
		t.Fatalf("release of declared alone: %v", err)
	}
	if after := output(t, root, nil, "git", "-C", root, "rev-parse", "HEAD"); after != head {
		t.Errorf("releasing declared alone made commits; cmd/basis is not in the release")
	}
	wantTags := "cmd/basis/v0.1.0\ncontract/v0.1.0\ndeclared/v0.1.0\ndeclared/v0.1.1\n"
	if diff := cmp.Diff(wantTags, output(t, root, nil, "git", "-C", root, "tag", "--list")); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if got := output(t, root, nil, "git", "-C", root, "rev-parse", "declared/v0.1.1^{commit}"); got != head {
		t.Errorf("declared/v0.1.1 is on %s, want the patch %s", got, head)
	}

	// A stranger: go get the new declared, and go install the command at
	// the version that still requires the old one.
	env := stranger(t, root)
	prog := t.TempDir()
	write(t, prog, map[string]string{
		"go.mod":  "module example.com/stranger\n\ngo 1.26.0\n",
		"main.go": "package main\n\nimport \"example.com/fix/declared\"\n\nfunc main() { println(declared.Describe()) }\n",
	})
	output(t, prog, env, "go", "get", "example.com/fix/declared@v0.1.1")
	if out := output(t, prog, env, "go", "run", "."); !strings.Contains(out, "contract declared v0.1.1") {
		t.Errorf("the stranger's program printed %q, want declared v0.1.1", out)
	}
	bin := t.TempDir()
	installEnv := append(slices.Clone(env), "GOBIN="+bin, "GOFLAGS=-modcacherw")
	output(t, t.TempDir(), installEnv, "go", "install", "example.com/fix/cmd/basis@v0.1.0")
	if out := output(t, t.TempDir(), env, filepath.Join(bin, "basis")); !strings.Contains(out, "contract declared v0.1.0") {
		t.Errorf("the installed cmd/basis v0.1.0 printed %q, want declared v0.1.0", out)
	}

	// A third release, cmd/basis alone, moving to declared v0.1.1: the
	// installable module's own commit without replaces still happens.
	write(t, root, map[string]string{"cmd/basis/go.mod": basisGoMod("v0.1.1")})
	setVersions(t, root, map[string]string{"contract": "v0.1.0", "declared": "v0.1.1", "cmd/basis": "v0.1.1"})
	commitAll(t, root, "cmd/basis: the patched declared")
	if err := check(t, root); err != nil {
		t.Fatalf("check of cmd/basis alone: %v", err)
	}
	if err := Release(plan(t, root), false, &bytes.Buffer{}); err != nil {
		t.Fatalf("release of cmd/basis alone: %v", err)
	}
	tagged := output(t, root, nil, "git", "-C", root, "show", "cmd/basis/v0.1.1:cmd/basis/go.mod")
	if strings.Contains(tagged, "replace") || !strings.Contains(tagged, "example.com/fix/declared v0.1.1") {
		t.Errorf("tagged cmd/basis/go.mod:\n%s", tagged)
	}
	if now, _ := os.ReadFile(filepath.Join(root, "cmd", "basis", "go.mod")); string(now) != basisGoMod("v0.1.1") {
		t.Errorf("the branch's cmd/basis/go.mod after the release:\n%s", now)
	}
	env = stranger(t, root)
	output(t, t.TempDir(), append(slices.Clone(env), "GOBIN="+bin, "GOFLAGS=-modcacherw"), "go", "install", "example.com/fix/cmd/basis@v0.1.1")
	if out := output(t, t.TempDir(), env, filepath.Join(bin, "basis")); !strings.Contains(out, "contract declared v0.1.1") {
		t.Errorf("the installed cmd/basis v0.1.1 printed %q, want declared v0.1.1", out)
	}
}

// A module being released may require a sibling only at a tagged version
// or at the version this release makes.
func TestReleaseRefusesRequirementNeitherTaggedNorReleased(t *testing.T) {
	root := repo(t, threeModules())
	gitT(t, root, "config", "user.name", "t")
	gitT(t, root, "config", "user.email", "t@example.com")
	if err := Release(plan(t, root), false, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	// cmd/basis moves to a declared v0.1.1 that this release does not make.
	write(t, root, map[string]string{"cmd/basis/go.mod": basisGoMod("v0.1.1")})
	setVersions(t, root, map[string]string{"contract": "v0.1.0", "declared": "v0.1.0", "cmd/basis": "v0.1.1"})
	commitAll(t, root, "cmd/basis: ahead of declared")
	want := "cmd/basis: requires example.com/fix/declared v0.1.1, which is neither tagged nor being released now (versions.yaml lists v0.1.0, already tagged)"
	if err := check(t, root); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Check = %v; want %q", err, want)
	}
	if err := Release(plan(t, root), true, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Release = %v; want %q", err, want)
	}
	// Releasing declared v0.1.1 with it is the fix.
	setVersions(t, root, map[string]string{"contract": "v0.1.0", "declared": "v0.1.1", "cmd/basis": "v0.1.1"})
	if err := check(t, root); err != nil {
		t.Errorf("with declared v0.1.1 in the release the check fails: %v", err)
	}
}

// -work names a directory that need not exist yet.
func TestCheckCreatesWorkDir(t *testing.T) {
	root := repo(t, twoModules("v0.1.0", "v0.1.0", "A"))
	work := filepath.Join(t.TempDir(), "new", "work")
	if err := runCheck([]string{"-root", root, "-work", work, "-keep", "-no-compare", "-no-hosts", "-no-install"}); err != nil {
		t.Fatalf("check -work %s: %v", work, err)
	}
}

// gorelease and apidiff compare a module being released with its last tag,
// whose go.mod still holds the development replaces.
func TestCheckComparesWithTheLastTag(t *testing.T) {
	root := repo(t, threeModules())
	gitT(t, root, "config", "user.name", "t")
	gitT(t, root, "config", "user.email", "t@example.com")
	if err := Release(plan(t, root), false, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"declared/d.go": declaredAt("v0.1.1")})
	setVersions(t, root, map[string]string{"contract": "v0.1.0", "declared": "v0.1.1", "cmd/basis": "v0.1.0"})
	commitAll(t, root, "declared: a patch")
	tools := t.TempDir()
	if err := buildTools(tools); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := Check(plan(t, root), CheckOptions{Work: t.TempDir(), Tools: tools, Log: &log}); err != nil {
		t.Fatalf("check with gorelease and apidiff: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "gorelease declared (base v0.1.0)") {
		t.Errorf("declared was not compared with its last tag:\n%s", log.String())
	}
}
