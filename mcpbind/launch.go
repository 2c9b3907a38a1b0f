//go:build unix

package mcpbind

import (
	"cmp"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/contract/configfile"
)

// launch is a server's configuration with every placeholder expanded: what
// starting it needs. It holds credentials, so it lives only inside a
// running server and is never printed.
type launch struct {
	command string
	args    []string
	env     []string // NAME=value, appended to the base environment
	cwd     string
	url     string
	headers http.Header
	// secrets are the values that must never be shown: every env and
	// header value and every expanded variable, longest first.
	secrets []string
}

// minSecretLen is the shortest value cut out of text shown to people:
// shorter values ("1", "true") are not credentials, and cutting them would
// mangle every message.
const minSecretLen = 6

// expand expands s's placeholders with lookup. An unset variable is a
// [*ConfigError] wrapping ErrUnsetVariable that names the variable and
// the field, never a value.
func (s *ServerConfig) expand(lookup func(string) (string, bool)) (*launch, error) {
	l := &launch{}
	var secrets []string
	record := func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok {
			secrets = append(secrets, v)
		}
		return v, ok
	}
	var failure error
	field := func(name, text string) string {
		if failure != nil {
			return ""
		}
		out, err := configfile.Expand(text, record)
		if err != nil {
			variable, cause := placeholderProblem(err)
			failure = &ConfigError{File: s.File, Server: printableName(s.Name), Field: name, Variable: variable, Err: cause}
		}
		return out
	}
	l.command = field("command", s.Command)
	for i, a := range s.Args {
		l.args = append(l.args, field("args["+itoa(i)+"]", a))
	}
	s.Env.Each(func(n, v string) {
		v = field("env."+n, v)
		secrets = append(secrets, v)
		l.env = append(l.env, n+"="+v)
	})
	l.cwd = field("cwd", s.Cwd)
	l.url = field("url", s.URL)
	if s.Headers.Len() > 0 {
		l.headers = http.Header{}
	}
	s.Headers.Each(func(n, v string) {
		v = field("headers."+n, v)
		secrets = append(secrets, v)
		if strings.ContainsAny(v, "\r\n") && failure == nil {
			failure = &ConfigError{File: s.File, Server: printableName(s.Name), Field: "headers." + n,
				Err: newProblem(ErrInvalidValue, "holds a line break once expanded, which would end the header early")}
		}
		l.headers.Set(n, v)
	})
	if failure != nil {
		return nil, failure
	}
	if s.Type == TypeStdio {
		switch {
		case l.cwd != "" && !filepath.IsAbs(l.cwd) && s.File != "":
			l.cwd = filepath.Join(filepath.Dir(s.File), l.cwd)
		case l.cwd == "" && s.Origin == OriginWorkspace && s.File != "":
			l.cwd = filepath.Dir(s.File)
		}
	}
	// A URL may carry credentials as written, not only through a
	// placeholder: its query values and its user info.
	if u, err := url.Parse(l.url); err == nil && l.url != "" {
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
		if pw, ok := u.User.Password(); ok {
			secrets = append(secrets, pw)
		}
		if u.User != nil {
			secrets = append(secrets, u.User.Username())
		}
	}
	for _, v := range secrets {
		if len(v) >= minSecretLen && !slices.Contains(l.secrets, v) {
			l.secrets = append(l.secrets, v)
		}
	}
	slices.SortFunc(l.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return l, nil
}

// CheckVariables reports, without starting anything, whether every ${VAR}
// the server uses is set or has a default: the error is the
// [*ConfigError] (wrapping [ErrUnsetVariable]) that would make the server
// unavailable at start, naming the variable and the field. lookup nil
// means os.LookupEnv.
func (s ServerConfig) CheckVariables(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	_, err := s.expand(lookup)
	return err
}

// redact cuts every secret out of text shown to people: a server's stderr,
// its error messages, its results.
func (l *launch) redact(text string) string {
	if l == nil {
		return text
	}
	for _, s := range l.secrets {
		if strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, redacted)
		}
	}
	return text
}
