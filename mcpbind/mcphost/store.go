//go:build unix

package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/mcpbind"
)

// TrustFileName is the trust store's file name in the operator config dir.
const TrustFileName = "mcp-trust.json"

// errTrustStore: the trust store cannot be read or written, or is
// writable by other users (then nobody's trust in it counts).
var errTrustStore = errors.New("MCP trust store unusable")

// storeError is a trust store problem; it is one problem, not a join, so
// that [mcpbind.Manager.Problems] lists it as one.
type storeError struct {
	text  string
	cause error
}

func (e *storeError) Error() string        { return e.text }
func (e *storeError) Unwrap() error        { return e.cause }
func (e *storeError) Is(target error) bool { return target == errTrustStore }

// TrustRecord is the operator's trust in one workspace config file.
type TrustRecord struct {
	// Path is absolute, links resolved; SHA256 the hex SHA-256 of the
	// content trusted; Files what its servers run ([mcpbind.Pin]).
	Path   string            `json:"path"`
	SHA256 string            `json:"sha256"`
	Files  map[string]string `json:"files"`
}

// TrustStore records the workspace .mcp.json files the operator trusted;
// it is an [mcpbind.Trust].
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

// list returns the records, sorted by path. A store that does not exist
// yet has none.
func (t *TrustStore) list(ctx context.Context) ([]TrustRecord, error) {
	f, err := t.read(ctx)
	if err != nil {
		return nil, err
	}
	return f.Trusted, nil
}

// Trusted implements [mcpbind.Trust].
func (t *TrustStore) Trusted(ctx context.Context, path, sum string) (mcpbind.TrustState, map[string]string, error) {
	f, err := t.read(ctx)
	if err != nil {
		return mcpbind.Untrusted, nil, err
	}
	state := mcpbind.Untrusted
	for _, r := range f.Trusted {
		if r.Path != path {
			continue
		}
		if r.SHA256 == sum {
			return mcpbind.Trusted, r.Files, nil
		}
		state = mcpbind.Changed
	}
	return state, nil, nil
}

// Trust records file, and the files its servers run, as trusted now.
func (t *TrustStore) Trust(ctx context.Context, file string) (TrustRecord, error) {
	path, sum, files, err := mcpbind.Pin(ctx, file)
	if err != nil {
		return TrustRecord{}, err
	}
	rec := TrustRecord{Path: path, SHA256: sum, Files: files}
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
	return &storeError{cause: cause, text: t.path + ": " + text}
}

// read reads the store the one careful way basis reads config files
// (configfile.ReadInfo: no blocking on a FIFO, a regular file after
// symlinks, bounded, cancellable).
func (t *TrustStore) read(ctx context.Context) (*trustFile, error) {
	data, info, err := configfile.ReadInfo(ctx, t.path, configfile.DefaultLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return &trustFile{}, nil
	}
	if err != nil {
		return nil, t.fail("cannot be read", err)
	}
	if info.Mode().Perm()&0o022 != 0 {
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
