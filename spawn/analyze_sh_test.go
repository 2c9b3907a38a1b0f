//go:build unix

package spawn_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/spawn"
	"github.com/basis-go/basis/subprocess"
)

// recorder is installed under every command name a body lists: it writes
// the argv it was run with, NUL-separated, to a file of its own.
const recorder = `#!/bin/sh
printf '%s\0' "${0##*/}" "$@" > "$SPAWN_TEST_LOG/$$"
`

// shells are the /bin/sh a body may meet: dash (Debian, Ubuntu), bash
// (the /bin/sh of Fedora, Arch and macOS, in POSIX mode there) and bash
// as itself. A body is analysable only if all of them read it the same.
var shells = []struct {
	name string
	argv []string // before "-c body"
}{
	{"dash", []string{"dash"}},
	{"bash", []string{"bash"}},
	{"bash --posix", []string{"bash", "--posix"}},
}

// shellArgv returns the argv that runs body under each shell, found in
// this process's PATH. A shell that is missing skips the test, saying so,
// unless CI is set (to anything but "", "false" or "0"): there the
// differential check must run.
func shellArgv(t *testing.T) map[string][]string {
	t.Helper()
	found := make(map[string][]string)
	for _, sh := range shells {
		path, err := exec.LookPath(sh.argv[0])
		if err != nil {
			if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
				t.Fatalf("%s is not installed; the differential check needs dash and bash (Debian packages dash and bash)", sh.argv[0])
			}
			t.Skipf("%s is not installed, so the analysis cannot be checked against it (install the dash and bash packages; with CI set this is a failure)", sh.argv[0])
		}
		found[sh.name] = append([]string{path}, sh.argv[1:]...)
	}
	return found
}

// FuzzAnalysisAgreesWithShell runs each analysable body under dash, bash
// and bash --posix, with PATH holding only recorders named after the
// listed commands, and checks the one direction that matters for a rule:
// every program a shell ran is one the analysis listed, with the same
// argv. (Some listed commands may not run: the right side of ||, a shell
// builtin.) The working directory holds a file, so a glob the analysis
// missed would expand. Bodies that name a program by path are skipped,
// since the real program would run.
func FuzzAnalysisAgreesWithShell(f *testing.F) {
	for _, tt := range analysable {
		f.Add(tt.body)
	}
	for _, body := range []string{
		"go test \u0080\ncurl x | sh",
		"go test # \u0080\ncurl x | sh",
		"echo '\u0081'; curl x",
		"a 'b\r\r\n'",
		"ls *",
		"x ~/y",
		"x {a,b}",
		"x $'\\x41'",
		// Read differently by dash and bash: bash assigns x+=1 and runs
		// touch, dash runs 10, and both pass { (not \{) to ls.
		"x+=1 touch PWNED",
		"10>/dev/null ls",
		"ls \\{",
		// bash (not in POSIX mode) expands a ~ after =, even in an argument.
		"x a=~/y",
		// Quoting and escapes both shells must read alike.
		"x a\\\nb \"a\\\nb\" 'a'\"b\"c \\\" \"\\a\" \"\\\\\" \\\\ \"'\" '' \"\"",
		"x\\\ny z; x\\ y z",
		"x [ ]a[ a{b } { {} '{}' \"{a,b}\" a,b = : a:b:c \\~ \"~\" % ^ @ a@b é a#b #c",
		"x a=b c; x -- ! ]",
		"x 0<&- 1>&2 2>&1 >/dev/null <&0; x && ! y || z\nx |\ny",
		"x\ty\t'z'",
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		listed, err := spawn.AnalyzeCommands(body)
		if err != nil {
			return
		}
		shellArgvs := shellArgv(t)
		bin, work := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "file-a"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// Recorders for the listed names, and for every word-like run of
		// the body, so a command the analysis missed is found and recorded
		// rather than "not found".
		names := strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune(" \t\n;&|<>()'\"\\$`{}*?[]#=!~", r) })
		for _, argv := range listed {
			if strings.Contains(argv[0], "/") {
				return // a path: the real program would run
			}
			names = append(names, argv[0])
		}
		for _, name := range names[:min(len(names), 64)] {
			if name == "" || name == "." || name == ".." || len(name) > 200 || strings.ContainsAny(name, "/\x00") {
				continue // no file can carry the name
			}
			if err := os.WriteFile(filepath.Join(bin, name), []byte(recorder), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, sh := range shells {
			logs := t.TempDir()
			res, err := subprocess.Run(t.Context(), &subprocess.Cmd{
				Argv:    append(slices.Clone(shellArgvs[sh.name]), "-c", body),
				Root:    work,
				Env:     []string{"PATH=" + bin, "SPAWN_TEST_LOG=" + logs, "HOME=/nonexistent-home"},
				Timeout: 10 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome.Kind == subprocess.TimedOut {
				t.Fatalf("%s: %q listed as %q did not finish", sh.name, body, listed)
			}
			entries, err := os.ReadDir(logs)
			if err != nil {
				t.Fatal(err)
			}
			unused := slices.Clone(listed)
			for _, e := range entries {
				raw, err := os.ReadFile(filepath.Join(logs, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				ran := strings.Split(string(bytes.TrimSuffix(raw, []byte{0})), "\x00")
				i := slices.IndexFunc(unused, func(argv []string) bool { return slices.Equal(argv, ran) })
				if i < 0 {
					t.Fatalf("%s -c %q ran %q, which the analysis did not list (listed %q)", sh.name, body, ran, listed)
				}
				unused = slices.Delete(unused, i, i+1)
			}
		}
	})
}
