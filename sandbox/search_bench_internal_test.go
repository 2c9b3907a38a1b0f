//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSearch times one search for what to protect in an unchanged
// repository of 138 directories within the search's depth (a checkout of
// this repository has 91), with its listings watched and
// going by their stamps alone (where the kernel offers no inotify, or
// past the watched bound), the clock moved on so that every stamp counts
// as settled.
func BenchmarkSearch(b *testing.B) {
	ws := b.TempDir()
	for _, f := range []string{".git/config", ".basis/tools.json", ".mcp.json", "go.mod"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 8 {
		for j := range 4 {
			for k := range 3 {
				if err := os.MkdirAll(filepath.Join(ws, fmt.Sprint("m", i), fmt.Sprint("p", j), fmt.Sprint("d", k)), 0o755); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Cleanup(SettleEveryChangeTime())
	for _, mode := range []struct {
		name    string
		watched bool
	}{{"stamps", false}, {"watched", true}} {
		b.Run(mode.name, func(b *testing.B) {
			sb, err := New(Policy{}, ws)
			if err != nil {
				b.Fatal(err)
			}
			ls := &listings{watchTried: !mode.watched, searches: searchesBeforeWatch}
			b.Cleanup(func() { ls.watch.close() })
			sb.listings = ls
			if _, err := sb.protectedPaths(ws); err != nil {
				b.Fatal(err)
			}
			if mode.watched && ls.watch == nil {
				b.Skip("this kernel offers no inotify")
			}
			for b.Loop() {
				if _, err := sb.protectedPaths(ws); err != nil {
					b.Fatal(err)
				}
			}
			if ls.reads > 2+8+32+96 { // the root, .basis, the tree: read once

				b.Fatalf("read %d directories: the unchanged tree was read again", ls.reads)
			}
		})
	}
}
