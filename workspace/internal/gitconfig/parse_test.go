package gitconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type kv struct {
	Key     string
	Value   string
	NoValue bool
	Line    int
}

func flat(entries []Entry) []kv {
	var out []kv
	for _, e := range entries {
		out = append(out, kv{e.Key(), e.Value, e.NoValue, e.Line})
	}
	return out
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, text string
		want       []kv
		errLine    int // 0: no error
	}{
		{"plain", "[core]\n\tfsmonitor = .git/x.sh\n\tbare = false\n",
			[]kv{{"core.fsmonitor", ".git/x.sh", false, 2}, {"core.bare", "false", false, 3}}, 0},
		{"case folds in section and name, not subsection", "[DIFF \"Foo\"]\n  TextConv = x\n",
			[]kv{{"diff.Foo.textconv", "x", false, 2}}, 0},
		{"old-style subsection is lower-cased", "[Diff.FOO]\ntextconv = x\n",
			[]kv{{"diff.foo.textconv", "x", false, 2}}, 0},
		{"a variable on the header's line", "[core] pager = less\n",
			[]kv{{"core.pager", "less", false, 1}}, 0},
		{"no value is boolean true", "[core]\n\tbare\n", []kv{{"core.bare", "", true, 2}}, 0},
		{"comments", "# c\n; c\n[core] ; c\n  editor = vim # c\n  pager = \"a # b\" ; c\n",
			[]kv{{"core.editor", "vim", false, 4}, {"core.pager", "a # b", false, 5}}, 0},
		{"blanks trimmed outside quotes", "[a]\nb =   x  y   \nc = \" x \"\n",
			[]kv{{"a.b", "x  y", false, 2}, {"a.c", " x ", false, 3}}, 0},
		{"escapes", `[a]` + "\n" + `b = x\ty\n\"\\` + "\n",
			[]kv{{"a.b", "x\ty\n\"\\", false, 2}}, 0},
		{"a continuation line", "[core]\n\tfsmonitor = a\\\nb\n\tpager = c\n",
			[]kv{{"core.fsmonitor", "ab", false, 2}, {"core.pager", "c", false, 4}}, 0},
		{"crlf", "[core]\r\n\tpager = less\r\n", []kv{{"core.pager", "less", false, 2}}, 0},
		{"byte order mark", "\xef\xbb\xbf[core]\npager = x\n", []kv{{"core.pager", "x", false, 2}}, 0},
		{"subsection escapes", "[diff \"a\\\"b\\\\c\\d\"]\ncommand = x\n", []kv{{`diff.a"b\cd.command`, "x", false, 2}}, 0},
		{"dots in a subsection", "[remote \"a.b\"]\nuploadpack = x\n", []kv{{"remote.a.b.uploadpack", "x", false, 2}}, 0},
		{"no newline at the end", "[core]\npager = x", []kv{{"core.pager", "x", false, 2}}, 0},
		{"a backslash at the very end continues into nothing", "[core]\npager = x\\", []kv{{"core.pager", "x", false, 2}}, 0},
		{"NUL ends a value", "[core]\npager = a\x00b\n", []kv{{"core.pager", "a", false, 2}}, 0},
		{"empty", "", nil, 0},

		// What git refuses.
		{"unknown escape", "[core]\npager = \\q\n", nil, 2},
		{"unclosed quote", "[core]\n\tpager = \"less\n[x]\n", nil, 2},
		{"unclosed section", "[core\npager = x\n", nil, 1},
		{"empty section", "[]\n", nil, 1},
		{"a name with an underscore", "[core]\nfs_monitor = x\n", nil, 2},
		{"a name starting with a digit", "[core]\n1x = x\n", nil, 2},
		{"junk after a subsection", "[diff \"x\"y]\n", nil, 1},
		{"comment right after a name", "[core]\nbare # c\n", nil, 2},
		{"partial byte order mark", "\xef\xbb[core]\n", nil, 1},
		{"keeps what came before the problem", "[core]\npager = a\n!x\n", []kv{{"core.pager", "a", false, 2}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.text))
			if diff := cmp.Diff(tt.want, flat(got)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			var se *SyntaxError
			switch {
			case tt.errLine == 0 && err != nil:
				t.Errorf("error %v", err)
			case tt.errLine != 0 && (!errors.As(err, &se) || se.Line != tt.errLine || !errors.Is(err, ErrSyntax)):
				t.Errorf("error %v, want one at line %d", err, tt.errLine)
			}
		})
	}
}

func TestWhat(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"[core]\nfsmonitor = .git/hooks/fsmonitor", RunsProgram},
		{"[core]\nfsmonitor = true", ""},
		{"[core]\nfsmonitor = false", ""},
		{"[core]\nfsmonitor = 0", ""},
		{"[core]\nfsmonitor", ""},
		{"[core]\nfsmonitor = \"\"", ""},
		{"[core]\nhooksPath = x", RunsProgram},
		{"[core]\npager = less", RunsProgram},
		{"[core]\neditor = vi", RunsProgram},
		{"[core]\nsshCommand = ssh -i k", RunsProgram},
		{"[core]\naskPass = x", RunsProgram},
		{"[sequence]\neditor = x", RunsProgram},
		{"[diff \"x\"]\ntextconv = x", RunsProgram},
		{"[diff \"x\"]\ncommand = x", RunsProgram},
		{"[diff]\nexternal = x", RunsProgram},
		{"[merge \"x\"]\ndriver = x", RunsProgram},
		{"[filter \"lfs\"]\nclean = x", RunsProgram},
		{"[filter \"lfs\"]\nsmudge = x", RunsProgram},
		{"[filter \"lfs\"]\nprocess = x", RunsProgram},
		{"[filter \"lfs\"]\nrequired = true", ""},
		{"[alias]\nst = status", ""},
		{"[alias]\nst = !sh -c x", RunsProgram},
		{"[pager]\nstatus = true", ""},
		{"[pager]\nstatus = evil", RunsProgram},
		{"[credential]\nhelper = store", RunsProgram},
		{"[credential \"https://x\"]\nhelper = x", RunsProgram},
		{"[gpg]\nprogram = x", RunsProgram},
		{"[gpg \"ssh\"]\nprogram = x", RunsProgram},
		{"[remote \"origin\"]\nuploadpack = x", RunsProgram},
		{"[remote \"origin\"]\nurl = x", ""},
		{"[submodule \"x\"]\nupdate = !x", RunsProgram},
		{"[submodule \"x\"]\nupdate = rebase", ""},
		{"[protocol \"ext\"]\nallow = always", RunsProgram},
		{"[protocol \"ext\"]\nallow = never", ""},
		{"[include]\npath = x", Includes},
		{"[includeIf \"gitdir:/x/\"]\npath = x", Includes},
		{"[user]\nname = x", ""},
	}
	for _, tt := range tests {
		entries, err := Parse([]byte(tt.text))
		if err != nil || len(entries) != 1 {
			t.Fatalf("%q: %v, %v", tt.text, entries, err)
		}
		if got := What(entries[0]); got != tt.want {
			t.Errorf("What(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// write renders entries as a config file git reads back to the same
// entries: each under a header of its own, its value quoted with every
// special character escaped.
func write(entries []Entry) string {
	var b strings.Builder
	for _, e := range entries {
		if e.Subsection != "" || strings.Count(e.Key(), ".") > 1 {
			sub := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e.Subsection)
			fmt.Fprintf(&b, "[%s \"%s\"]\n", e.Section, sub)
		} else {
			fmt.Fprintf(&b, "[%s]\n", e.Section)
		}
		if e.NoValue {
			fmt.Fprintf(&b, "\t%s\n", e.Name)
			continue
		}
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`).Replace(e.Value)
		fmt.Fprintf(&b, "\t%s = \"%s\"\n", e.Name, v)
	}
	return b.String()
}

// FuzzParse: the parser never panics, reports lines within the text, gives
// canonical names, and what it reads, written back out, reads back the
// same.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"[core]\n\tfsmonitor = x\n",
		"[diff \"a\\\"b\"] textconv = \"x ; y\" # c\n",
		"[Alias]\nst = !sh -c 'x'\\\n  y\n",
		"\xef\xbb\xbf[a.B]\r\nc\n",
		"[include]\npath = ~/x\n[includeIf \"gitdir:x\"]\npath = y",
		"[a]\nb = \"unclosed\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data)
		lines := strings.Count(string(data), "\n") + 1
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1 || se.Line > lines) {
			t.Fatalf("error %v for %d lines", err, lines)
		}
		for _, e := range entries {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry %+v outside %d lines", e, lines)
			}
			// A NUL in a subsection ends the name there, as git's C
			// strings do: what is left may be any part of the header.
			if !strings.Contains(string(data), "\x00") && (e.Section != strings.ToLower(e.Section) || e.Name != strings.ToLower(e.Name) || e.Name == "") {
				t.Fatalf("entry %+v: section and name must be lower case and the name non-empty", e)
			}
			if strings.IndexByte(e.Value, 0) >= 0 {
				t.Fatalf("entry %+v: a value holds NUL", e)
			}
		}
		// Round trip, for what has a section (a variable before any
		// header has none, and cannot be written under one).
		if strings.Contains(string(data), "\x00") {
			return // a NUL may have cut a name anywhere
		}
		var sectioned []Entry
		for _, e := range entries {
			if e.Section != "" && !strings.Contains(e.Subsection, "\n") {
				sectioned = append(sectioned, e)
			}
		}
		again, err := Parse([]byte(write(sectioned)))
		if err != nil {
			t.Fatalf("written back %q: %v", write(sectioned), err)
		}
		type key struct{ Key, Value string }
		var want, got []key
		for _, e := range sectioned {
			want = append(want, key{e.Key(), e.Value})
		}
		for _, e := range again {
			got = append(got, key{e.Key(), e.Value})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round trip of %q (-first +again):\n%s", data, diff)
		}
	})
}
