package e2e_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMECodeIsCompiled holds every Go code block of every Markdown
// file in the repository — the READMEs and the guides under docs/ — to
// the code the tests compile: each block's lines (indentation aside) must
// appear, in order and together, in a Go file of the repository — a
// runnable Example for code that shows how to use something, the source
// itself for a declaration. A README example that drifts from the API
// fails here instead of in a reader's editor.
func TestREADMECodeIsCompiled(t *testing.T) {
	root := repoRoot(t)
	var goFiles []goFile
	for _, f := range gitFiles(t, root, "*.go") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		goFiles = append(goFiles, goFile{path: f, text: "\n" + strings.Join(normalizedLines(string(data)), "\n") + "\n"})
	}
	for _, readme := range gitFiles(t, root, "*.md") {
		data, err := os.ReadFile(filepath.Join(root, readme))
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range goBlocks(string(data)) {
			lines := normalizedLines(block.code)
			if len(lines) == 0 {
				t.Errorf("%s:%d: this Go block is empty; give it code from a runnable Example, or remove it", readme, block.line)
				continue
			}
			if n, where := longestPrefix(lines, goFiles); n < len(lines) {
				t.Errorf("%s:%d: this Go block is in no Go file of the repository; make it a runnable Example (or copy it from one)%s:\n%s",
					readme, block.line, divergence(lines, n, where), block.code)
			}
		}
	}
}

type goFile struct {
	path string
	// text is the file's normalized lines, each between newlines.
	text string
}

// longestPrefix returns how many of lines, from the first, appear together
// in one Go file, and that file: all of them when the block is there.
func longestPrefix(lines []string, files []goFile) (int, string) {
	for n := len(lines); n > 0; n-- {
		want := "\n" + strings.Join(lines[:n], "\n") + "\n"
		for _, f := range files {
			if strings.Contains(f.text, want) {
				return n, f.path
			}
		}
	}
	return 0, ""
}

// divergence says where a block that is in no Go file parts from the
// closest one, so the fix is one look away.
func divergence(lines []string, n int, where string) string {
	if n == 0 {
		return fmt.Sprintf("; not even its first line, %q, is in one", lines[0])
	}
	return fmt.Sprintf("; its first %d lines are in %s, but then it has %q", n, where, lines[n])
}

type codeBlock struct {
	line int
	code string
}

// goBlocks returns the ```go fenced blocks of a Markdown text.
func goBlocks(md string) []codeBlock {
	var out []codeBlock
	var cur *codeBlock
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur, lines = &codeBlock{line: n}, nil
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = strings.Join(lines, "\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			lines = append(lines, line)
		}
	}
	return out
}

// normalizedLines is the text's non-blank lines with leading and trailing
// space removed and runs of spaces inside collapsed, so gofmt's alignment
// of trailing comments does not matter.
func normalizedLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func gitFiles(t *testing.T, root, pattern string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--", pattern).Output()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if !strings.Contains(f, "node_modules/") {
			files = append(files, f)
		}
	}
	return files
}
