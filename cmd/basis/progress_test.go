package main

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"tab\there", "tab here"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[2J\x1b[Hcleared", "cleared"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"back\rspace\b\x00\x7f\u0085", "backspace"},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFitWidth(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"日本語のテキスト", 7, "日本語…"},
		{"日本語", 6, "日本語"},
		{"anything", 0, "…"},
	} {
		got := fitWidth(tc.in, tc.width)
		if got != tc.want {
			t.Errorf("fitWidth(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		if columns(got) > max(tc.width, 1) {
			t.Errorf("fitWidth(%q, %d) = %q takes %d columns", tc.in, tc.width, got, columns(got))
		}
	}
}

func TestStatusLineReplacesItselfAndIsErased(t *testing.T) {
	var buf bytes.Buffer
	s := &statusLine{w: &buf, width: 20, tool: "go_test"}
	s.clear() // nothing shown: nothing to erase
	s.show("ok  ./a 0.1s")
	s.show("\x1b[31mFAIL\x1b[0m ./b has a long name")
	s.clear()
	s.clear()
	want := eraseLine + "[go_test] ok  ./a …" + eraseLine + "[go_test] FAIL ./b…" + eraseLine
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("terminal output (-want +got):\n%s", diff)
	}
}

func TestVersionText(t *testing.T) {
	info := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: version}, Settings: settings}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build information", nil, false, "basis (devel) (unknown)"},
		{"a module version", info("v0.1.0"), true, "basis v0.1.0 (go1.26.8)"},
		{"built from a checkout", info("(devel)",
			debug.BuildSetting{Key: "vcs", Value: "git"},
			debug.BuildSetting{Key: "vcs.revision", Value: "1a3e961c0ffee"},
			debug.BuildSetting{Key: "vcs.time", Value: "2026-11-30T14:00:00Z"},
			debug.BuildSetting{Key: "vcs.modified", Value: "false"}), true,
			"basis (devel) (go1.26.8)\nrevision 1a3e961c0ffee (2026-11-30T14:00:00Z)"},
		{"with uncommitted changes", info("",
			debug.BuildSetting{Key: "vcs.revision", Value: "1a3e961c0ffee"},
			debug.BuildSetting{Key: "vcs.modified", Value: "true"}), true,
			"basis (devel) (go1.26.8)\nrevision 1a3e961c0ffee+dirty"},
	} {
		if got := versionText(tc.info, tc.ok); got != tc.want {
			t.Errorf("%s: versionText = %q, want %q", tc.name, got, tc.want)
		}
	}
}
