package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
	// Released once, the same versions are refused by the check until
	// versions.yaml moves on.
	if err := check(t, root); err == nil || !strings.Contains(err.Error(), "already tagged") {
		t.Errorf("check after the release = %v; want the tagged version refused", err)
	}
}
