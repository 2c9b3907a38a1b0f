//go:build unix

package mcpbind

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/basis-go/basis/mcpbind/internal/redact"
)

// Values holds a server's env or headers as written: only Lookup gives a
// value; every way of printing one redacts it.
type Values struct {
	names []string          // sorted
	vals  map[string]string // by name
}

// NewValues returns Values holding a copy of m (nil when m is empty).
func NewValues(m map[string]string) *Values {
	if len(m) == 0 {
		return nil
	}
	return &Values{names: slices.Sorted(maps.Keys(m)), vals: maps.Clone(m)}
}

// Len returns the number of names.
func (v *Values) Len() int {
	if v == nil {
		return 0
	}
	return len(v.names)
}

// Names returns the names, sorted.
func (v *Values) nameList() []string {
	if v == nil {
		return nil
	}
	return slices.Clone(v.names)
}

// Lookup returns the value written for name.
func (v *Values) Lookup(name string) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := v.vals[name]
	return s, ok
}

// Each calls fn for every name and value, in name order.
func (v *Values) each(fn func(name, value string)) {
	if v == nil {
		return
	}
	for _, n := range v.names {
		fn(n, v.vals[n])
	}
}

const redacted = redact.Mark

// String shows the names, never the values: "{API_TOKEN=[redacted]}".
func (v *Values) String() string {
	if v == nil {
		return "{}"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range v.names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + "=" + redacted)
	}
	b.WriteByte('}')
	return b.String()
}

// GoString is String, so %#v shows no value either.
func (v *Values) GoString() string { return "mcpbind.Values" + v.String() }

// Format implements fmt.Formatter, redacted.
func (v *Values) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, v.GoString())
		return
	}
	fmt.Fprint(f, v.String())
}

// LogValue implements [slog.LogValuer]: the names with redacted values.
func (v *Values) LogValue() slog.Value { return slog.StringValue(v.String()) }

// MarshalJSON encodes the names with redacted values.
func (v *Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range v.names {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(n)
		b.Write(name)
		b.WriteString(`:"` + redacted + `"`)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// configView is a ServerConfig with its URL's credentials cut out, for
// printing. It is a type of its own so that printing it does not call
// ServerConfig's methods again.
type configView struct {
	Name                        string
	Type                        string
	Command                     string
	Args                        []string
	Env                         *Values
	Cwd                         string
	URL                         string
	Headers                     *Values
	StartupTimeout, CallTimeout time.Duration
	TrustAnnotations            bool
	File                        string
	Origin                      Origin
	Root                        string
	ToolPrefix                  any // the prefix, or nil for the default: never a pointer's address
	EnabledTools, DisabledTools []string
	MaxOutputTokens             int
	OAuth                       any `json:",omitempty"` // an oauthView, or nil: never a pointer's address
}

func (s ServerConfig) view() configView {
	v := configView{Name: s.Name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
		URL: redact.URL(s.URL), Headers: s.Headers, StartupTimeout: s.StartupTimeout, CallTimeout: s.CallTimeout,
		TrustAnnotations: s.TrustAnnotations, File: s.File, Origin: s.Origin, Root: s.Root,
		EnabledTools: s.EnabledTools, DisabledTools: s.DisabledTools, MaxOutputTokens: s.MaxOutputTokens}
	if s.ToolPrefix != nil {
		v.ToolPrefix = *s.ToolPrefix
	}
	if s.OAuth != nil {
		v.OAuth = s.OAuth.view()
	}
	return v
}

// String prints the config with its values and credentials redacted.
func (s ServerConfig) String() string { return fmt.Sprintf("%+v", s.view()) }

// GoString is like String, for %#v.
func (s ServerConfig) GoString() string { return fmt.Sprintf("%#v", s.view()) }

// Format implements fmt.Formatter, redacted.
func (s ServerConfig) Format(f fmt.State, verb rune) {
	if verb != 'v' {
		fmt.Fprint(f, s.String())
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), s.view())
}

// LogValue implements [slog.LogValuer] with the same redaction.
func (s ServerConfig) LogValue() slog.Value { return slog.AnyValue(s.view()) }

// MarshalJSON encodes the config redacted.
func (s ServerConfig) MarshalJSON() ([]byte, error) { return json.Marshal(s.view()) }
