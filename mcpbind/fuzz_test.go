//go:build unix

package mcpbind_test

import (
	"errors"
	"github.com/basis-go/basis/configfile"
	"slices"
	"strings"
	"testing"

	"github.com/basis-go/basis/mcpbind"
)

// FuzzParseConfig: any bytes either parse or fail with *ConfigError
// values that each wrap a sentinel and fit on one line; parsing never
// panics and never lets through a server with nothing to start.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["${A:-b}"], "env": {"K": "v"}}}}`,
		`{"mcpServers": {"a": {"type": "http", "url": "http://h", "headers": {"H": "${T}"}}}}`,
		`{"mcpServers": {"a": {"type": "bogus"}, "b": {"url": 1}, "b": {}}}`,
		`{"mcpServers": {"a": {"command": "x", "startup_timeout_ms": 1e3, "trust_annotations": "yes"}}}`,
		`{"mcpServers": []}`, `[]`, `{`, ``, `{"x": 1}`, "{\"mcpServers\": {\"\\u0000\": {\"command\": \"${\"}}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := mcpbind.ParseConfig("/f/.mcp.json", data, mcpbind.OriginWorkspace)
		for _, s := range servers {
			if s.Name == "" || (s.Type != "stdio" && s.Type != "http" && s.Type != "sse") {
				t.Fatalf("a server without a name or type survived: %+v", s)
			}
			if s.Type == "stdio" && s.Command == "" || s.Type != "stdio" && s.URL == "" {
				t.Fatalf("a server with nothing to start survived: %+v", s)
			}
			if s.TrustAnnotations {
				t.Fatal("a workspace file trusted its own annotations")
			}
		}
		if err == nil {
			return
		}
		for _, e := range unjoin(err) {
			var ce *configfile.Error
			if !errors.As(e, &ce) {
				t.Fatalf("%v is not a *ConfigError", e)
			}
			if strings.Contains(e.Error(), "\n") {
				t.Fatalf("message breaks the line: %q", e.Error())
			}
			if !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(e, s) }) {
				t.Fatalf("%v wraps no sentinel", e)
			}
		}
	})
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

var sentinels = []error{mcpbind.ErrSyntax, mcpbind.ErrMissingField, mcpbind.ErrWrongType, mcpbind.ErrUnknownType,
	mcpbind.ErrDuplicateKey, mcpbind.ErrInvalidValue, mcpbind.ErrPlaceholder}
