//go:build unix

package mcpbind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/basis-go/basis/configfile"
)

// TrustState is what the operator's trust says about one workspace file.
type TrustState string

const (
	Untrusted TrustState = "untrusted" // never trusted; also the zero TrustState
	Trusted   TrustState = "trusted"   // trusted with exactly this content
	Changed   TrustState = "changed"   // trusted, but changed since: to trust again
)

// String returns the state; the zero TrustState is "untrusted".
func (s TrustState) String() string {
	if s == Trusted || s == Changed {
		return string(s)
	}
	return string(Untrusted)
}

// Trust is where [Load] finds which workspace files the operator
// trusted; mcphost.TrustStore is basis's.
type Trust interface {
	// Trusted returns Trusted and the files [Pin] pinned when the file
	// at path (absolute, links resolved) was trusted with the content
	// whose hex SHA-256 is sum; Changed when with other content.
	Trusted(ctx context.Context, path, sum string) (TrustState, map[string]string, error)
}

// Pin reads the workspace config file as trusting it covers it: its path
// (absolute, links resolved), the hex SHA-256 of its content and what
// its servers run from the workspace, "sha256:HEX" (or "symlink:TARGET"
// for a link out) by path. A file that cannot be read as an MCP config
// is refused.
func Pin(ctx context.Context, file string) (path, sum string, files map[string]string, err error) {
	path, err = resolvePath(file)
	if err != nil {
		return "", "", nil, err
	}
	data, _, err := readConfigFile(ctx, path)
	if err != nil {
		return "", "", nil, err
	}
	// Trusting a file basis cannot read as an MCP config would only hide
	// the problem until the next start.
	servers, err := parseConfig(path, data, OriginWorkspace)
	if err != nil {
		problems := []error{err}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			problems = joined.Unwrap()
		}
		for _, e := range problems {
			if ce, ok := e.(*configfile.Error); ok && ce.Subject == "" {
				return "", "", nil, err // the file as a whole is unreadable
			}
		}
	}
	files, err = pinAll(ctx, servers, filepath.Dir(path))
	if err != nil {
		return "", "", nil, err
	}
	return path, contentHash(data), files, nil
}

// verify says whether the workspace file at path, whose content is data
// and whose servers are servers (as [parseConfig] read them from data), is
// trusted as it is now: its content, and every file its stdio servers run
// from the workspace (the file's directory) as it was pinned. For a file
// whose content is trusted but whose pinned files changed, it returns
// Changed and the paths that changed (or appeared, or went), sorted, and
// the pins of a trusted file.
func verify(ctx context.Context, path string, servers []ServerConfig, trusted map[string]string) (TrustState, []string, map[string]string, error) {
	current, err := pinAll(ctx, servers, filepath.Dir(path))
	if err != nil {
		return Changed, nil, nil, err
	}
	if changed := changedPins(trusted, current); len(changed) > 0 {
		return Changed, changed, nil, nil
	}
	return Trusted, nil, current, nil
}

func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// resolvePath returns the absolute, symlink-resolved path of an existing
// file: the path trust records and tool sources name.
func resolvePath(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", &configfile.Error{File: file, Err: &problem{kind: errUnreadable, cause: err, text: "has no absolute path: " + err.Error()}}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &configfile.Error{File: abs, Err: &problem{kind: errUnreadable, cause: err, text: "does not exist"}}
	}
	if err != nil {
		return "", &configfile.Error{File: abs, Err: &problem{kind: errUnreadable, cause: err, text: "cannot be resolved: " + configfile.Reason(err)}}
	}
	return resolved, nil
}
