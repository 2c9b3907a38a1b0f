package configfile_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/basis-go/basis/configfile"
)

func TestErrorMessage(t *testing.T) {
	cause := errors.New("unknown key; did you mean timeout_ms?")
	tests := []struct {
		name string
		err  configfile.Error
		want string
	}{
		{"everything", configfile.Error{File: "/r/.basis/tools.json", Line: 9, Column: 7, Subject: "tool deploy", Field: "timout_ms", Err: cause},
			"/r/.basis/tools.json:9:7: tool deploy: timout_ms: unknown key; did you mean timeout_ms?"},
		{"no position", configfile.Error{File: "/r/.mcp.json", Err: cause}, "/r/.mcp.json: unknown key; did you mean timeout_ms?"},
		{"no file", configfile.Error{Line: 2, Column: 3, Subject: "rule 1", Err: cause}, "line 2, column 3: rule 1: unknown key; did you mean timeout_ms?"},
		{"no column", configfile.Error{File: "f", Line: 2, Err: cause}, "f:2:1: unknown key; did you mean timeout_ms?"},
		{"no cause", configfile.Error{File: "f", Field: "command"}, "f: command: invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorUnwraps(t *testing.T) {
	err := error(&configfile.Error{File: "f", Err: fs.ErrNotExist})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) = false, want true", err)
	}
	var ce *configfile.Error
	if !errors.As(errors.Join(errors.New("other"), err), &ce) || ce.File != "f" {
		t.Errorf("errors.As found %+v, want the Error of file f", ce)
	}
}
