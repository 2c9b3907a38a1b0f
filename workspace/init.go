//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// Init starts a workspace in root, as basis init does: it writes
// .basis/tools.json declaring one example tool, word_count, and the tool's
// program, .basis/bin/word_count. It overwrites nothing: when either file
// is there, it changes nothing and returns an *fs.PathError naming it that
// is fs.ErrExist.
func Init(root string) error {
	manifest := filepath.Join(root, ".basis", "tools.json")
	script := filepath.Join(root, ".basis", "bin", "word_count")
	for _, p := range []string{manifest, script} {
		if _, err := os.Lstat(p); err == nil {
			return &fs.PathError{Op: "init", Path: p, Err: fs.ErrExist}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		return err
	}
	// O_EXCL: a file that appeared since the check above is not replaced.
	if err := writeNew(script, initScript, 0o755); err != nil {
		return err
	}
	if err := writeNew(manifest, initManifest, 0o644); err != nil {
		os.Remove(script)
		return err
	}
	return nil
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
