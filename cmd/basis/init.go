package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	basisws "github.com/basis-go/basis/workspace"
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
	var exists *fs.PathError
	if err := basisws.Init(root); errors.As(err, &exists) && errors.Is(err, fs.ErrExist) {
		return usageErr(e, "init: %s already exists; init overwrites nothing (edit it, or remove it and run basis init again)", exists.Path)
	} else if err != nil {
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
