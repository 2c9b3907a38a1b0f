//go:build unix

package mcpbind

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/configfile"
)

// TrustFileName is the trust store's file name in the operator config dir.
const TrustFileName = "mcp-trust.json"

// errTrustStore: the trust store cannot be read or written, or is
// writable by other users (then nobody's trust in it counts).
var errTrustStore = errors.New("MCP trust store unusable")

// TrustRecord is the operator's trust in one workspace config file.
type TrustRecord struct {
	// Path is absolute, links resolved; SHA256 is the hex SHA-256 of the
	// content trusted.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Files pins the programs and argument files the servers run from
	// the workspace: "sha256:HEX", or "symlink:TARGET" for a link out.
	Files map[string]string `json:"files"`
}

// TrustState is what the trust store says about one workspace file.
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

// TrustStore records the workspace .mcp.json files the operator trusted.
type TrustStore struct {
	path string
}

// NewTrustStore returns the store in configDir, the operator config dir.
func NewTrustStore(configDir string) *TrustStore {
	return &TrustStore{path: filepath.Join(configDir, TrustFileName)}
}

// Path returns the store's file path.
func (t *TrustStore) Path() string { return t.path }

type trustFile struct {
	Trusted []TrustRecord `json:"trusted"`
}

// List returns the records, sorted by path. A store that does not exist
// yet has none.
func (t *TrustStore) list(ctx context.Context) ([]TrustRecord, error) {
	f, err := t.read(ctx)
	if err != nil {
		return nil, err
	}
	return f.Trusted, nil
}

// State says whether the workspace file at path, whose content is data,
// is trusted. path must be absolute and symlink-resolved (as [Load]
// records it).
//
// It judges the content only; verify also checks the files
// the servers run.
func (t *TrustStore) state(ctx context.Context, path string, data []byte) (TrustState, error) {
	_, state, err := t.record(ctx, path, data)
	return state, err
}

// verify says whether the workspace file at path, whose content is data
// and whose servers are servers (as [parseConfig] read them from data), is
// trusted as it is now: its content, and every file its stdio servers run
// from the workspace (the file's directory) as it was pinned. For a file
// whose content is trusted but whose pinned files changed, it returns
// Changed and the paths that changed (or appeared, or went), sorted, and
// the pins of a trusted file.
func (t *TrustStore) verify(ctx context.Context, path string, data []byte, servers []ServerConfig) (TrustState, []string, map[string]string, error) {
	rec, state, err := t.record(ctx, path, data)
	if err != nil || state != Trusted {
		return state, nil, nil, err
	}
	current, err := pinAll(ctx, servers, filepath.Dir(path))
	if err != nil {
		return Changed, nil, nil, err
	}
	if changed := changedPins(rec.Files, current); len(changed) > 0 {
		return Changed, changed, nil, nil
	}
	return Trusted, nil, current, nil
}

// record returns the record that trusts path with content data, and the
// state State reports.
func (t *TrustStore) record(ctx context.Context, path string, data []byte) (TrustRecord, TrustState, error) {
	f, err := t.read(ctx)
	if err != nil {
		return TrustRecord{}, Untrusted, err
	}
	sum := contentHash(data)
	state := Untrusted
	for _, r := range f.Trusted {
		if r.Path != path {
			continue
		}
		if r.SHA256 == sum {
			return r, Trusted, nil
		}
		state = Changed
	}
	return TrustRecord{}, state, nil
}

// Trust records file, and the files its servers run, as trusted now.
func (t *TrustStore) Trust(ctx context.Context, file string) (TrustRecord, error) {
	path, err := resolvePath(file)
	if err != nil {
		return TrustRecord{}, err
	}
	data, _, err := readConfigFile(ctx, path)
	if err != nil {
		return TrustRecord{}, err
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
				return TrustRecord{}, err // the file as a whole is unreadable
			}
		}
	}
	files, err := pinAll(ctx, servers, filepath.Dir(path))
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Path: path, SHA256: contentHash(data), Files: files}
	f, err := t.read(ctx)
	if err != nil {
		return TrustRecord{}, err
	}
	f.Trusted = slices.DeleteFunc(f.Trusted, func(r TrustRecord) bool { return r.Path == path })
	f.Trusted = append(f.Trusted, rec)
	return rec, t.write(f)
}

// Untrust forgets file, which need not exist, reporting if it was known.
func (t *TrustStore) Untrust(ctx context.Context, file string) (bool, error) {
	path, err := filepath.Abs(file)
	if err != nil {
		return false, err
	}
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	f, err := t.read(ctx)
	if err != nil {
		return false, err
	}
	n := len(f.Trusted)
	f.Trusted = slices.DeleteFunc(f.Trusted, func(r TrustRecord) bool { return r.Path == path })
	if len(f.Trusted) == n {
		return false, nil
	}
	return true, t.write(f)
}

func (t *TrustStore) fail(text string, cause error) error {
	return &problem{kind: errTrustStore, cause: cause, text: t.path + ": " + text}
}

func (t *TrustStore) read(ctx context.Context) (*trustFile, error) {
	data, mode, err := readConfigFile(ctx, t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &trustFile{}, nil
	}
	if err != nil {
		return nil, t.fail("cannot be read", err)
	}
	if mode.Perm()&0o022 != 0 {
		return nil, t.fail("is writable by other users, so its records cannot be trusted; chmod go-w it", nil)
	}
	var f trustFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, t.fail("is not a trust store (not valid JSON); remove it and trust the files again", err)
	}
	slices.SortFunc(f.Trusted, func(a, b TrustRecord) int { return strings.Compare(a.Path, b.Path) })
	return &f, nil
}

// write replaces the store atomically, through a symlink to its target,
// keeping an existing file's mode (configfile.WriteAtomic).
func (t *TrustStore) write(f *trustFile) error {
	slices.SortFunc(f.Trusted, func(a, b TrustRecord) int { return strings.Compare(a.Path, b.Path) })
	if f.Trusted == nil {
		f.Trusted = []TrustRecord{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return t.fail("cannot be encoded", err)
	}
	// The directory is made first: WriteAtomic writes beside the target.
	target, err := configfile.Target(t.path)
	if err != nil {
		return t.fail("cannot be written: "+configfile.Reason(err), err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return t.fail("cannot be written: "+configfile.Reason(err), err)
	}
	// An existing store keeps its mode, which read has just found not
	// writable by others; a new one is the operator's alone.
	if err := configfile.WriteAtomic(t.path, buf.Bytes(), 0o600); err != nil {
		return t.fail("cannot be written: "+configfile.Reason(err), err)
	}
	return nil
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
