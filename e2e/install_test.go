//go:build linux

package e2e_test

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMakeInstall installs basis as the README says and checks that make
// says where it went and whether that directory is on PATH, and that the
// installed command runs.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds basis")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root := repoRoot(t)
	gobin := t.TempDir()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, want string
	}{
		{"on PATH", gobin + ":/usr/bin:/bin", gobin + " is on PATH: run basis"},
		{"not on PATH", "/usr/bin:/bin", gobin + " is not on PATH: add it (export PATH=\"" + gobin + ":$PATH\") or run " + gobin + "/basis"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("make", "--no-print-directory", "-C", root, "install", "GO="+goTool)
			cmd.Env = append(os.Environ(), "GOBIN="+gobin, "PATH="+c.path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make install: %v\n%s", err, out)
			}
			want := "installed " + filepath.Join(gobin, "basis") + " and " + filepath.Join(gobin, "basis-sandbox") + "\n" + c.want + "\n"
			if got := string(out); !strings.HasSuffix(got, want) {
				t.Errorf("make install said:\n%s\nwant it to end with:\n%s", got, want)
			}
			version, err := exec.Command(filepath.Join(gobin, "basis"), "version").CombinedOutput()
			if err != nil || !strings.HasPrefix(string(version), "basis ") {
				t.Errorf("the installed basis: %v\n%s", err, version)
			}
			// The sandbox helper, static (it starts fastest so): an ELF
			// with no interpreter to load.
			helper, err := elf.Open(filepath.Join(gobin, "basis-sandbox"))
			if err != nil {
				t.Fatalf("the installed sandbox helper: %v", err)
			}
			defer helper.Close()
			for _, p := range helper.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("the installed sandbox helper is dynamically linked")
				}
			}
		})
	}
}

// TestREADMEManifestChecks holds the README's tools.json to what basis
// accepts: the block, as a workspace's manifest, passes basis check, and
// declares the tools the demo's manifest does, with the same commands.
func TestREADMEManifestChecks(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```json\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("the README shows no tools.json")
	}
	ws := t.TempDir()
	// basis check wants the programs to exist: stand-ins do.
	if err := os.MkdirAll(filepath.Join(ws, ".basis", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"word_count", "ticket"} {
		if err := os.WriteFile(filepath.Join(ws, ".basis", "bin", p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".basis", "tools.json"), []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(basisBinary, "-C", ws, "check")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws, "BASIS_CONFIG_DIR=" + filepath.Join(ws, "config")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("basis check of the README's manifest: %v\n%s", err, out)
	}
	var shown, demo struct {
		Tools map[string]struct{ Command []string } `json:"tools"`
	}
	demoData, err := os.ReadFile(filepath.Join(root, "examples", "workspace", ".basis", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(block), &shown); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(demoData, &demo); err != nil {
		t.Fatal(err)
	}
	for name, tool := range shown.Tools {
		if !slices.Equal(tool.Command, demo.Tools[name].Command) {
			t.Errorf("the README's %s runs %q; the demo's runs %q", name, tool.Command, demo.Tools[name].Command)
		}
	}
}
