package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The workspace basis init writes: a manifest with one tool, and the
// tool's program. The program is a shell script only because every Unix
// has sh; a real tool is any program that reads one JSON object on stdin.
const (
	initManifest = `{
  "schema": 1,
  "tools": {
    "word_count": {
      "description": "Count the lines, words and bytes of a file in this workspace.",
      "input_schema": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "The file, relative to the workspace root."}
        },
        "required": ["path"],
        "additionalProperties": false
      },
      "command": ["./.basis/bin/word_count"],
      "side_effect": "process",
      "timeout_ms": 10000
    }
  }
}
`
	initScript = `#!/bin/sh
# word_count: reads {"path": "..."} on stdin and prints the file's lines,
# words and bytes. A tool is any program that reads one JSON object on
# stdin and prints its result on stdout; stderr lines are progress, and a
# non-zero exit is a failure whose stderr the model reads.
#
# This example pulls the one string out with sed to need nothing but sh;
# a real tool should use a JSON parser (jq, python3 -c 'import json', Go).
set -eu
input=$(cat)
path=$(printf '%s' "$input" | sed -n 's/.*"path"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p')
if [ -z "$path" ]; then
  echo "give the file as {\"path\": \"relative/path\"}" >&2
  exit 2
fi
case "$path" in
  /*|../*|*/../*|*/..|..) echo "$path: give a path inside the workspace" >&2; exit 2 ;;
esac
if [ ! -f "$path" ]; then
  echo "$path: no such file in the workspace" >&2
  exit 1
fi
wc -l -w -c < "$path" | awk -v p="$path" '{print p ": " $1 " lines, " $2 " words, " $3 " bytes"}'
`
)

func cmdInit(g *globals, args []string, e *env) int {
	c := newCommand("init", "init", `Starts a workspace in the current directory (or -C DIR): writes
.basis/tools.json declaring one example tool, word_count, and its program
.basis/bin/word_count, then says what to do next. Nothing that exists is
overwritten: if either file is there, init changes nothing.
`)
	if _, code := c.parseArgs(args, 0, 0, e); code >= 0 {
		return code
	}
	cwd, err := e.getwd()
	if err != nil {
		return configErr(e, []error{fmt.Errorf("cannot tell the current directory (%v); pass the directory with -C DIR", err)})
	}
	// init makes a workspace where it is told, never in a parent found by
	// walking up.
	root := cwd
	if g.dir != "" {
		root = absFrom(cwd, g.dir)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return configErr(e, []error{fmt.Errorf("%s is not a directory; create it first, or give another with -C DIR", root)})
	}
	manifest := filepath.Join(root, ".basis", "tools.json")
	script := filepath.Join(root, ".basis", "bin", "word_count")
	for _, p := range []string{manifest, script} {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return usageErr(e, "init: %s already exists; init overwrites nothing (edit it, or remove it and run basis init again)", p)
		}
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		return configErr(e, []error{fmt.Errorf("init: %v", err)})
	}
	// O_EXCL: a file that appeared since the check above is not replaced.
	if err := writeNew(script, initScript, 0o755); err != nil {
		return configErr(e, []error{fmt.Errorf("init: %v", err)})
	}
	if err := writeNew(manifest, initManifest, 0o644); err != nil {
		os.Remove(script)
		return configErr(e, []error{fmt.Errorf("init: %v", err)})
	}
	dirFlag := ""
	if g.dir != "" {
		dirFlag = "-C " + shellQuote(g.dir) + " "
	}
	fmt.Fprintf(e.stdout, `created .basis/tools.json, declaring the tool word_count
created .basis/bin/word_count, its program

next:
  see it next to spawn, basis's own tool:
      basis %[1]stools
  run it (at a terminal, you are asked first):
      basis %[1]scall word_count '{"path": ".basis/tools.json"}'
  stop being asked about it:
      basis %[1]srules add --tool word_count --allow
  after you edit .basis/tools.json:
      basis %[1]scheck
`, dirFlag)
	return exitOK
}

// writeNew creates path with content, failing if it exists.
func writeNew(path, content string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return os.Chmod(path, mode) // the umask must not take the script's x bit
}

// shellQuote quotes s for a shell when it needs it, for commands printed
// for people to copy.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ':' || r == ',' || r == '=' || r == '@' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	if s == "" {
		return "''"
	}
	return s
}
