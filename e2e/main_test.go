//go:build linux

package e2e_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// basisBinary is the basis command, built once from ../cmd/basis.
var basisBinary string

// binDir holds what TestMain builds; tests add their own builds there.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		// Listing runs nothing: no need to build basis.
		os.Exit(m.Run())
	}
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "basis-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binDir = dir
		basisBinary = filepath.Join(dir, "basis")
		if err := goBuild(filepath.Join(repoDir(), "cmd", "basis"), basisBinary, "."); err != nil {
			fmt.Fprintln(os.Stderr, "building basis:", err)
			return 1
		}
		return m.Run()
	}())
}

// repoDir is the repository's root: this module's parent.
func repoDir() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}

// goBuild runs go build in dir, writing to out, with extra arguments
// (flags, then the package). It builds in the module of dir, so it works
// both in the workspace and with GOWORK=off.
func goBuild(dir, out string, args ...string) error {
	return goBuildEnv(nil, dir, out, args...)
}

// goBuildEnv is goBuild with variables added to the environment
// (CGO_ENABLED=0 for a static build).
func goBuildEnv(env []string, dir, out string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return nil
}

// basisEnv is the environment basis runs with in these tests: this
// process's, without the variables that would point basis at the
// operator's own configuration or change its behaviour.
func basisEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "BASIS_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// result is how one run of basis ended.
type result struct {
	stdout, stderr string
	code           int
}

// runBasis runs the basis binary bin with args in dir, with a
// configuration directory of the test's own (cfg), and waits for it.
func runBasis(t *testing.T, bin, cfg string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = basisEnv("BASIS_CONFIG_DIR=" + cfg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		if cmd.ProcessState == nil {
			t.Fatalf("basis %s: %v", strings.Join(args, " "), err)
		}
		code = cmd.ProcessState.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// writeFiles writes each file (path relative to root) with its content;
// a path ending in ".sh" is made executable.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	writeFilesTB(t, root, files)
}

func writeFilesTB(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	exampleToolsOnce sync.Once
	exampleToolsDir  string
	exampleToolsErr  error
)

// exampleWorkspace copies examples/workspace into a temporary directory
// and puts the example tools, built once, into its .basis/bin.
func exampleWorkspace(t *testing.T) string {
	t.Helper()
	exampleToolsOnce.Do(func() {
		exampleToolsDir = filepath.Join(binDir, "example-tools")
		exampleToolsErr = goBuild(filepath.Join(repoDir(), "examples"), exampleToolsDir+string(filepath.Separator), "./tools/...")
	})
	if exampleToolsErr != nil {
		t.Fatal(exampleToolsErr)
	}
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(filepath.Join(repoDir(), "examples", "workspace"))); err != nil {
		t.Fatal(err)
	}
	// The copy is the test's: the built tools go beside the manifest.
	bin := filepath.Join(ws, ".basis", "bin")
	if err := os.RemoveAll(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(bin, os.DirFS(exampleToolsDir)); err != nil {
		t.Fatal(err)
	}
	return ws
}

// toolRows returns the rows of the tool table `basis tools` prints first,
// without its header: the table ends at the first empty line (an MCP
// server table may follow).
func toolRows(stdout string) []string {
	lines := strings.Split(stdout, "\n")
	var rows []string
	for _, line := range lines[min(1, len(lines)):] {
		if strings.TrimSpace(line) == "" {
			break
		}
		rows = append(rows, line)
	}
	return rows
}
