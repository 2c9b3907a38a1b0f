//go:build unix

package configfile_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/basis-go/basis/configfile"
)

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 101), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		is   error
		says string
	}{
		{"FIFO does not block", fifo, configfile.ErrNotRegular, "a named pipe"},
		{"symlink to /dev/zero", zero, configfile.ErrNotRegular, "a character device"},
		{"directory", dir, configfile.ErrNotRegular, "a directory"},
		{"too large", big, configfile.ErrTooLarge, "the limit is 100"},
		{"missing", filepath.Join(dir, "none"), fs.ErrNotExist, "no such file"},
	}
	for _, tt := range tests {
		data, err := configfile.Read(context.Background(), tt.path, 100)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) || data != nil {
			t.Errorf("%s: Read = %d bytes, %v; want %v saying %q", tt.name, len(data), err, tt.is, tt.says)
		}
		var nr *configfile.NotRegularError
		if errors.As(err, &nr) != (tt.is == configfile.ErrNotRegular) {
			t.Errorf("%s: Read = %v; a *NotRegularError exactly when it is not a regular file", tt.name, err)
		} else if nr != nil && (nr.Path != tt.path || nr.Found() != tt.says) {
			t.Errorf("%s: NotRegularError{%q, %v} says %q; want %q at %q", tt.name, nr.Path, nr.Mode, nr.Found(), tt.says, tt.path)
		}
	}
}

func TestReadFollowsLinksAndHonoursContext(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	data, err := configfile.Read(context.Background(), link, 0)
	if err != nil || string(data) != `{"a":1}` {
		t.Fatalf("Read(link) = %q, %v", data, err)
	}
	if err := os.Chmod(real, 0o620); err != nil {
		t.Fatal(err)
	}
	data, info, err := configfile.ReadInfo(context.Background(), link, 0)
	if err != nil || string(data) != `{"a":1}` || info.Mode() != 0o620 || info.Size() != 7 {
		t.Fatalf("ReadInfo(link) = %q, %v, %v; want the target's content and mode 0620", data, info, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := configfile.Read(ctx, real, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestWriteAtomicThroughSymlinkKeepsMode(t *testing.T) {
	dir := t.TempDir()
	dotfiles := filepath.Join(dir, "dotfiles")
	if err := os.Mkdir(dotfiles, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dotfiles, "rules.json")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "rules.json")
	if err := os.Symlink("dotfiles/rules.json", link); err != nil {
		t.Fatal(err)
	}
	if err := configfile.WriteAtomic(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", info, err)
	}
	data, _ := os.ReadFile(target)
	info, _ := os.Stat(target)
	if string(data) != "new" || info.Mode().Perm() != 0o600 {
		t.Errorf("target holds %q with mode %v; want \"new\" with 0600", data, info.Mode().Perm())
	}
	fresh := filepath.Join(dir, "fresh.json")
	if err := configfile.WriteAtomic(fresh, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(fresh); info.Mode().Perm() != 0o640 {
		t.Errorf("a new file has mode %v, want 0640", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dotfiles)
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the target: %v", entries)
	}
}

func TestParsePositions(t *testing.T) {
	data := []byte("{\n  \"é\": [1, {\"b\": true}],\n  \"c\": \"x\\u0041\"\n}")
	doc, err := configfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	members := doc.Members()
	var keys []string
	var places [][2]int
	for _, m := range members {
		keys = append(keys, m.Key)
		l, c := configfile.LineCol(data, m.KeyOff)
		places = append(places, [2]int{l, c})
	}
	if !reflect.DeepEqual(keys, []string{"é", "c"}) || !reflect.DeepEqual(places, [][2]int{{2, 3}, {3, 3}}) {
		t.Errorf("keys %q at %v", keys, places)
	}
	var phrases []string
	for _, e := range members[0].Value.Elements() {
		phrases = append(phrases, e.KindPhrase())
	}
	phrases = append(phrases, members[1].Value.KindPhrase(), doc.KindPhrase(), configfile.Value{}.KindPhrase())
	others, _ := configfile.Parse([]byte("[true, null, []]"))
	for _, e := range others.Elements() {
		phrases = append(phrases, e.KindPhrase())
	}
	if want := []string{"a number", "an object", "a string", "an object", "nothing", "a boolean", "null", "an array"}; !reflect.DeepEqual(phrases, want) {
		t.Errorf("KindPhrase: %q, want %q", phrases, want)
	}
	elems := members[0].Value.Elements()
	if len(elems) != 2 || elems[1].Kind() != "object" {
		t.Fatalf("elements %v", elems)
	}
	if l, c := configfile.LineCol(data, elems[1].Members()[0].Value.Off); l != 2 || c != 18 {
		t.Errorf("true is at %d:%d, want 2:18 (columns in characters, not bytes)", l, c)
	}
	if s, ok := members[1].Value.Text(); !ok || s != "xA" {
		t.Errorf("Text() = %q, %v", s, ok)
	}
}

func TestParseSyntaxErrors(t *testing.T) {
	tests := []struct {
		doc  string
		kind configfile.SyntaxKind
		line int
		col  int
	}{
		{"", configfile.SyntaxEmpty, 1, 1},
		{"{\"a\": 1", configfile.SyntaxIncomplete, 1, 8},
		{"{\"a\": 1}\n{}", configfile.SyntaxTrailing, 2, 1},
		{"{\n\"a\": SECRET}", configfile.SyntaxInvalid, 2, 6},
	}
	for _, tt := range tests {
		_, err := configfile.Parse([]byte(tt.doc))
		var se *configfile.SyntaxError
		if !errors.As(err, &se) || se.Kind != tt.kind {
			t.Errorf("Parse(%q) = %v, want kind %q", tt.doc, err, tt.kind)
			continue
		}
		if l, c := configfile.LineCol([]byte(tt.doc), se.Off); l != tt.line || c != tt.col {
			t.Errorf("Parse(%q) at %d:%d, want %d:%d", tt.doc, l, c, tt.line, tt.col)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("message quotes the text: %v", err)
		}
	}
}

func TestLooksLikeKey(t *testing.T) {
	for key, want := range map[string]bool{"timout_ms": true, "$schema": true, "": false, "ghp_abc def": false, strings.Repeat("a", 41): false, "x:y": false} {
		if got := configfile.LooksLikeKey(key); got != want {
			t.Errorf("LooksLikeKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"a": [1, {"b": "c"}], "d": null}`)
	f.Add(`{"a": 1,}`)
	f.Add("[\"\\u00e9\", 2e5]")
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := configfile.Parse([]byte(doc))
		if err != nil {
			var se *configfile.SyntaxError
			if !errors.As(err, &se) || se.Off < 0 || se.Off > len(doc) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		walk(t, v, []byte(doc))
	})
}

// walk visits every value, checking each offset points at its own text.
func walk(t *testing.T, v configfile.Value, doc []byte) {
	if v.Off < 0 || v.Off+len(v.Raw) > len(doc) || string(doc[v.Off:v.Off+len(v.Raw)]) != string(v.Raw) {
		t.Fatalf("value at %d does not match the document", v.Off)
	}
	for _, m := range v.Members() {
		if doc[m.KeyOff] != '"' {
			t.Fatalf("key offset %d is not at a quote", m.KeyOff)
		}
		walk(t, m.Value, doc)
	}
	for _, e := range v.Elements() {
		walk(t, e, doc)
	}
}
