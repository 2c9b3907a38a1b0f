package main

import (
	"fmt"
	"runtime/debug"
)

func cmdVersion(args []string, e *env) int {
	c := newCommand("version", "version", `Prints basis's module version, the Go version it was built with and, when it
was built from a checkout, the revision (with "+dirty" for uncommitted
changes) and its time.
`)
	_, code := c.parseArgs(args, 0, 0, e)
	if code >= 0 {
		return code
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionText(info, ok))
	return exitOK
}

// versionText is "basis VERSION (GOVERSION)", then ", revision REV" and
// ", built from DATE" when the build recorded them.
func versionText(info *debug.BuildInfo, ok bool) string {
	version, goVersion := "(devel)", "unknown"
	if !ok {
		return fmt.Sprintf("basis %s (%s)", version, goVersion)
	}
	goVersion = info.GoVersion
	if v := info.Main.Version; v != "" {
		version = v
	}
	var revision, when string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	text := fmt.Sprintf("basis %s (%s)", version, goVersion)
	if revision != "" {
		if dirty {
			revision += "+dirty"
		}
		text += "\nrevision " + revision
		if when != "" {
			text += " (" + when + ")"
		}
	}
	return text
}
