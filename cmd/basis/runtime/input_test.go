package runtime_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// endless is a stream that never ends, as a hostile stdin or /dev/zero.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "input.json")
	if err := os.WriteFile(file, []byte(`{"from": "file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, arg string
		stdin     io.Reader
		want      string
		wantErr   string
	}{
		{name: "argument", arg: `{"a": 1}`, want: `{"a": 1}`},
		{name: "stdin", arg: "-", stdin: strings.NewReader(`{"from": "stdin"}`), want: `{"from": "stdin"}`},
		{name: "file", arg: "@" + file, want: `{"from": "file"}`},
		{name: "missing file", arg: "@" + filepath.Join(dir, "none"), wantErr: "reading the input: open "},
		{name: "directory", arg: "@" + dir, wantErr: "reading the input: read "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runtime.ReadInput(t.Context(), tt.arg, tt.stdin)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadInput(%q) = %v; want an error with %q", tt.arg, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("ReadInput(%q) (-want +got):\n%s", tt.arg, diff)
			}
		})
	}
}

// An endless stdin is read only one byte past the limit: the call is then
// refused for its size, and basis's memory does not grow with it.
func TestReadInputIsBounded(t *testing.T) {
	got, err := runtime.ReadInput(t.Context(), "-", endless{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != contract.MaxInputBytes+1 {
		t.Fatalf("read %d bytes; want %d", len(got), contract.MaxInputBytes+1)
	}
	if _, err := contract.CanonicalInput(got); !errors.Is(err, contract.ErrInvalidInput) {
		t.Errorf("the bounded input is not refused for its size: %v", err)
	}
}

// A read that waits for input that never comes ends with the context.
func TestReadInputStopsWithTheContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	stop := errors.New("stopped by a signal")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(stop)
	if _, err := runtime.ReadInput(ctx, "-", r); !errors.Is(err, stop) {
		t.Errorf("ReadInput on a silent stdin after cancel = %v; want %v", err, stop)
	}
}

func TestNewCallID(t *testing.T) {
	shape := regexp.MustCompile(`^cli-[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for range 100 {
		id := runtime.NewCallID("cli-")
		if !shape.MatchString(id) {
			t.Fatalf("NewCallID = %q; want cli- and 16 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("NewCallID repeated %q", id)
		}
		seen[id] = true
	}
}
