//go:build unix

package workspace

import (
	"os"
	"slices"
	"time"
)

// Stamps is what a host that serves for long compares to tell that a
// config file was edited: each file's size and modification time, or that
// it does not exist.
type Stamps struct {
	files map[string]fileStamp
}

type fileStamp struct {
	exists bool
	size   int64
	mtime  time.Time
}

// Stamp stamps every file of [Workspace.ConfigFiles], and the host's own
// (its MCP config files, say).
func (w *Workspace) Stamp(extra ...string) Stamps {
	paths := append(w.ConfigFiles(), extra...)
	out := Stamps{files: make(map[string]fileStamp, len(paths))}
	for _, p := range paths {
		var st fileStamp
		if info, err := os.Stat(p); err == nil {
			st = fileStamp{exists: true, size: info.Size(), mtime: info.ModTime()}
		}
		out.files[p] = st
	}
	return out
}

// Changed lists, sorted, the files whose stamps differ between s and now:
// edited, created, removed, or stamped in one only.
func (s Stamps) Changed(now Stamps) []string {
	var out []string
	for p, st := range now.files {
		if old, ok := s.files[p]; !ok || old != st {
			out = append(out, p)
		}
	}
	for p := range s.files {
		if _, ok := now.files[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
