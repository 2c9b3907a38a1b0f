package main

import (
	"fmt"
	"runtime/debug"
)

func cmdVersion(args []string, e *env) int {
	c := newCommand("version", "version", "Prints basis's version and the Go version it was built with.\n")
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	version, goVersion := "(devel)", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if v := info.Main.Version; v != "" {
			version = v
		}
	}
	fmt.Fprintf(e.stdout, "basis %s (%s)\n", version, goVersion)
	return exitOK
}
