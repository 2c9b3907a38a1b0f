//go:build unix

package declared

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/basis-go/basis/contract"
)

// redacted stands in for every environment value wherever a Spec or Tool
// is printed.
const redacted = "[redacted]"

// Spec is one declared tool, validated, with its ${VAR} placeholders
// resolved. Its exported fields are the tool as written in the manifest:
// the command and cwd keep their placeholders, and of the environment only
// the names are here. What the program really gets — the expanded command
// and directory, and the environment with its values — is sealed where no
// print reaches it: String, GoString, Format (%v %+v %#v %s), LogValue and
// MarshalJSON all show env values as "[redacted]" and the command as
// written, and even fmt's reflection over a Spec inside another value
// cannot get at the values.
type Spec struct {
	// Name is the tool's name: the key in the manifest's "tools" object.
	Name string
	// Description is what the model reads about the tool.
	Description string
	// InputSchema is the tool's input_schema, compacted.
	InputSchema json.RawMessage
	// Command is the argv as written, placeholders unexpanded.
	Command []string
	// Cwd is the working directory as written; empty when the manifest
	// gives none (the program then runs in Root).
	Cwd string
	// EnvNames lists the names the manifest's env sets, sorted.
	EnvNames []string
	// SideEffect is process (the default) or external.
	SideEffect contract.SideEffect
	// Timeout bounds one call: timeout_ms, or DefaultTimeout.
	Timeout time.Duration
	// Network is the manifest's "network": whether the program may reach
	// the network when it runs sandboxed. Only a tool whose side effect
	// is external may set it.
	Network bool
	// ReadOnly is the manifest's "sandbox": "read-only": the program asks
	// to run read-only ([Options.ReadOnlySandbox]).
	ReadOnly bool
	// Root is the workspace root, absolute: where a relative program path
	// and cwd resolve.
	Root string
	// Source is the manifest the tool came from.
	Source string

	run sealed
}

// sealed holds what a program is really given. A pointer alone would not
// hide it: fmt dereferences pointers it meets through reflection in more
// than one path (a %s or %d of a struct holding a Spec prints the pointed-to
// values). A function's closure is the one place reflection cannot open,
// so the values live in one.
type sealed func() *resolved

func seal(r *resolved) sealed { return func() *resolved { return r } }

// resolved is what a program is really given.
type resolved struct {
	argv []string // command, expanded
	dir  string   // cwd, expanded; "" for Root
	env  []string // the whole environment: inherited, command, manifest
}

// clone returns a copy whose slices the caller may change freely.
func (s Spec) clone() *Spec {
	c := s
	c.InputSchema = slices.Clone(s.InputSchema)
	c.Command = slices.Clone(s.Command)
	c.EnvNames = slices.Clone(s.EnvNames)
	return &c
}

// String returns one line: the name, the command as written, the side
// effect and timeout, the env names with values redacted, and the source.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Name + ": " + commandLine(s.Command))
	if s.Cwd != "" {
		b.WriteString(" in " + quoteWord(s.Cwd))
	}
	b.WriteString(" (" + s.SideEffect.String() + ", timeout " + s.Timeout.String())
	if s.Network {
		b.WriteString(", network")
	}
	if len(s.EnvNames) > 0 {
		b.WriteString(", env " + s.envText(" "))
	}
	b.WriteString(") from " + s.Source)
	return b.String()
}

// GoString returns a Go-syntax-like form with env values redacted, for
// %#v.
func (s Spec) GoString() string {
	return fmt.Sprintf("declared.Spec{Name:%q, Description:%q, Command:%#v, Cwd:%q, Env:{%s}, SideEffect:%s, Timeout:%s, Network:%t, Root:%q, Source:%q}",
		s.Name, s.Description, s.Command, s.Cwd, s.envText(", "), s.SideEffect, s.Timeout, s.Network, s.Root, s.Source)
}

// Format implements [fmt.Formatter], so every verb (%v, %+v, %#v, %s, %q)
// prints the redacted forms and never reaches the values by reflection.
func (s Spec) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, s.GoString())
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(s.String()))
	default:
		fmt.Fprint(f, s.String())
	}
}

// LogValue implements [slog.LogValuer]: the tool as written, env values
// redacted.
func (s Spec) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("name", s.Name),
		slog.Any("command", s.Command),
	}
	if s.Cwd != "" {
		attrs = append(attrs, slog.String("cwd", s.Cwd))
	}
	if len(s.EnvNames) > 0 {
		env := make([]any, 0, len(s.EnvNames))
		for _, name := range s.EnvNames {
			env = append(env, slog.String(name, redacted))
		}
		attrs = append(attrs, slog.Group("env", env...))
	}
	attrs = append(attrs,
		slog.String("side_effect", s.SideEffect.String()),
		slog.Duration("timeout", s.Timeout),
	)
	if s.Network {
		attrs = append(attrs, slog.Bool("network", true))
	}
	attrs = append(attrs, slog.String("source", s.Source))
	return slog.GroupValue(attrs...)
}

// specJSON is the JSON form of a Spec: the manifest's own field names.
type specJSON struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	InputSchema json.RawMessage     `json:"input_schema"`
	Command     []string            `json:"command"`
	Cwd         string              `json:"cwd,omitempty"`
	Env         map[string]string   `json:"env,omitempty"`
	SideEffect  contract.SideEffect `json:"side_effect"`
	TimeoutMS   int64               `json:"timeout_ms"`
	Network     bool                `json:"network,omitempty"`
	Sandbox     string              `json:"sandbox,omitempty"`
	Root        string              `json:"root"`
	Source      string              `json:"source"`
}

// MarshalJSON encodes the tool as written, in the manifest's field names
// ("network" only when true), with every env value "[redacted]".
func (s Spec) MarshalJSON() ([]byte, error) {
	var env map[string]string
	if len(s.EnvNames) > 0 {
		env = make(map[string]string, len(s.EnvNames))
		for _, name := range s.EnvNames {
			env[name] = redacted
		}
	}
	schema := s.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage("null")
	}
	return json.Marshal(specJSON{
		Name: s.Name, Description: s.Description, InputSchema: schema,
		Command: s.Command, Cwd: s.Cwd, Env: env, SideEffect: s.SideEffect,
		TimeoutMS: s.Timeout.Milliseconds(), Network: s.Network, Sandbox: s.sandboxWord(), Root: s.Root, Source: s.Source,
	})
}

// readOnlySandbox is the one value of a manifest entry's "sandbox".
const readOnlySandbox = "read-only"

// sandboxWord is the manifest's "sandbox", or "" when not given.
func (s Spec) sandboxWord() string {
	if s.ReadOnly {
		return readOnlySandbox
	}
	return ""
}

func (s Spec) envText(sep string) string {
	parts := make([]string, len(s.EnvNames))
	for i, name := range s.EnvNames {
		parts[i] = name + "=" + redacted
	}
	return strings.Join(parts, sep)
}

// commandLine joins argv for a human, quoting words a reader could
// misjudge (spaces, quotes, control characters) so it stays one line.
func commandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = quoteWord(w)
	}
	return strings.Join(words, " ")
}

func quoteWord(w string) string {
	if w == "" {
		return `""`
	}
	for _, c := range w {
		if !plainRune(c) {
			return strconv.Quote(w)
		}
	}
	return w
}

func plainRune(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.ContainsRune("-_./:=@%+,${}~", c)
}
