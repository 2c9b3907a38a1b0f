//go:build unix

package testserver

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildProgram builds cmd/mcptestserver into dir and returns its path.
func BuildProgram(dir string) (string, error) {
	bin := filepath.Join(dir, "mcptestserver")
	build := exec.Command("go", "build", "-o", bin, "github.com/basis-go/basis/mcpbind/internal/testserver/cmd/mcptestserver")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the test server: %w\n%s", err, out)
	}
	return bin, nil
}

// ParseEnviron reads the environ tool's answer: the working directory and
// the environment (and write=, when the tool was asked to write).
func ParseEnviron(text string) (cwd string, env map[string]string, ok bool) {
	lines := strings.Split(text, "\n")
	cwd, ok = strings.CutPrefix(lines[0], "cwd=")
	if !ok {
		return "", nil, false
	}
	env = map[string]string{}
	for _, l := range lines[1:] {
		if k, v, found := strings.Cut(l, "="); found {
			env[k] = v
		}
	}
	return cwd, env, true
}
