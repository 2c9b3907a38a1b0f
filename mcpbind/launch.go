//go:build unix

package mcpbind

import (
	"cmp"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/configfile"
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
	// clientID and clientSecret are the "oauth" entry's, expanded.
	clientID, clientSecret string
	// secrets are the values that must never be shown: every env and
	// header value and every expanded variable, longest first.
	secrets []string
}

// minSecretLen is the shortest value cut out of text shown to people:
// shorter values ("1", "true") are not credentials, and cutting them would
// mangle every message.
const minSecretLen = 6

// expand expands s's placeholders with lookup. An unset variable is a
// [*configfile.Error] wrapping configfile.ErrUnsetVariable that names the variable and
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
			cause := placeholderProblem(err)
			failure = &configfile.Error{File: s.File, Subject: subjectOf(printableName(s.Name)), Field: name, Err: cause}
		}
		return out
	}
	l.command = field("command", s.Command)
	for i, a := range s.Args {
		l.args = append(l.args, field("args["+itoa(i)+"]", a))
	}
	s.Env.each(func(n, v string) {
		v = field("env."+n, v)
		secrets = append(secrets, v)
		l.env = append(l.env, n+"="+v)
	})
	l.cwd = field("cwd", s.Cwd)
	l.url = field("url", s.URL)
	if s.Headers.Len() > 0 {
		l.headers = http.Header{}
	}
	s.Headers.each(func(n, v string) {
		v = field("headers."+n, v)
		secrets = append(secrets, v)
		if strings.ContainsAny(v, "\r\n") && failure == nil {
			failure = &configfile.Error{File: s.File, Subject: subjectOf(printableName(s.Name)), Field: "headers." + n,
				Err: newProblem(errInvalidValue, "holds a line break once expanded, which would end the header early")}
		}
		l.headers.Set(n, v)
	})
	if s.OAuth != nil {
		l.clientID = field("oauth.client_id", s.OAuth.ClientID)
		l.clientSecret = field("oauth.client_secret", s.OAuth.ClientSecret)
		secrets = append(secrets, l.clientSecret)
	}
	if failure != nil {
		return nil, failure
	}
	if s.Type == TypeStdio {
		switch {
		case l.cwd != "" && !filepath.IsAbs(l.cwd) && s.File != "":
			// Not filepath.Join, which would apply a ".." before the
			// links ahead of it are followed: the kernel, and workdir's
			// check, take the path as written.
			l.cwd = filepath.Dir(s.File) + string(filepath.Separator) + l.cwd
		case l.cwd == "" && s.Origin.workspace() && s.File != "":
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

// checkVariables reports, without starting anything, whether every ${VAR}
// the server uses is set or has a default: the error is the
// [*configfile.Error] (wrapping [configfile.ErrUnsetVariable]) that would make the server
// unavailable at start, naming the variable and the field. lookup nil
// means os.LookupEnv. [ServerConfig.Check] checks the cwd too.
func (s ServerConfig) checkVariables(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	_, err := s.expand(lookup)
	return err
}

// Check reports, starting nothing, whether the server can start here: its
// ${VAR}s set and a workspace server's cwd inside the workspace.
func (s ServerConfig) Check(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	l, err := s.expand(lookup)
	if err != nil {
		return err
	}
	if _, err := s.workdir(l); err != nil && !errors.Is(err, ErrStart) {
		return err
	}
	return nil
}

// workdir is the directory a stdio server starts in: l.cwd as expanded,
// except for a workspace's server, whose cwd must resolve inside the
// workspace — links and ".." followed, as the kernel would — and is
// replaced by the real path found, so what starts in it is not that
// path's next link. A cwd outside is a [*configfile.Error] wrapping
// [errOutsideWorkspace]; one that cannot be resolved (it does not exist)
// an error wrapping [ErrStart] and the operating system's reason.
func (s *ServerConfig) workdir(l *launch) (string, error) {
	if s.Type != TypeStdio || !s.Origin.workspace() {
		return l.cwd, nil
	}
	root := s.Root
	if root == "" {
		root = filepath.Dir(s.File)
	}
	real, err := configfile.WithinRoot(root, l.cwd)
	switch {
	case err == nil:
		return real, nil
	case errors.Is(err, configfile.ErrOutsideRoot):
		return "", &configfile.Error{File: s.File, Subject: subjectOf(printableName(s.Name)), Field: "cwd", Err: &problem{kind: errOutsideWorkspace, cause: err,
			text: "leads outside the workspace once placeholders are expanded and symbolic links followed, and a workspace's server runs inside its workspace: " +
				"give a directory in it (only the operator's own mcp.json may name one elsewhere)"}}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the reason, without a path that may hold a secret
	}
	text := "its working directory (cwd in " + s.File + ") cannot be used: " + err.Error()
	if errors.Is(err, fs.ErrNotExist) {
		text = "its working directory (cwd in " + s.File + ") does not exist; create it, or change cwd"
	}
	return "", &problem{kind: ErrStart, cause: err, text: text}
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
