// Command json_query reads a JSON file inside the workspace and prints the
// value at a dotted path ("items.0.name"). It is an example declared tool:
// its input is one JSON object on stdin, {"file": "...", "path": "..."}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

type input struct {
	File string `json:"file"`
	Path string `json:"path"`
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail("the input is not a JSON object: %v", err)
	}
	if !filepath.IsLocal(in.File) {
		fail("file must be a relative path inside the workspace, such as data/inventory.json")
	}
	data, err := os.ReadFile(in.File)
	if err != nil {
		fail("cannot read %s: %v", in.File, err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		fail("%s is not JSON: %v", in.File, err)
	}
	value, err := lookup(doc, in.Path)
	if err != nil {
		fail("%s: %v", in.File, err)
	}
	if s, ok := value.(string); ok {
		fmt.Println(s)
		return
	}
	out, _ := json.MarshalIndent(value, "", "  ")
	fmt.Println(string(out))
}

// lookup walks a dotted path: object keys by name, array elements by
// index. An empty path is the whole document.
func lookup(doc any, path string) (any, error) {
	if path == "" {
		return doc, nil
	}
	at := "$"
	for _, step := range strings.Split(path, ".") {
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[step]
			if !ok {
				return nil, fmt.Errorf("%s has no key %q; its keys are %s", at, step, keys(v))
			}
			doc = next
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("%s is a list of %d; %q is not an index in it", at, len(v), step)
			}
			doc = v[i]
		default:
			return nil, fmt.Errorf("%s is not an object or a list, so it has no %q", at, step)
		}
		at += "." + step
	}
	return doc, nil
}

func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, strconv.Quote(k))
	}
	if len(ks) == 0 {
		return "none"
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}
