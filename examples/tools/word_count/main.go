// Command word_count counts the lines, words and characters of a text, or
// of a file inside the workspace. It is an example declared tool: its input
// is one JSON object on stdin, {"text": "..."} or {"path": "..."}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

type input struct {
	Text *string `json:"text"`
	Path string  `json:"path"`
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail("the input is not a JSON object: %v", err)
	}
	text, what := "", ""
	switch {
	case in.Text != nil && in.Path != "":
		fail("give either text or path, not both")
	case in.Text != nil:
		text, what = *in.Text, "the text"
	case in.Path != "":
		if !filepath.IsLocal(in.Path) {
			fail("path must be a relative path inside the workspace, such as data/notes.txt")
		}
		data, err := os.ReadFile(in.Path)
		if err != nil {
			fail("cannot read %s: %v", in.Path, err)
		}
		text, what = string(data), in.Path
	default:
		fail("give text to count, or the path of a file in the workspace")
	}
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	fmt.Printf("%s: %d lines, %d words, %d characters\n", what, lines, len(strings.Fields(text)), utf8.RuneCountInString(text))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}
