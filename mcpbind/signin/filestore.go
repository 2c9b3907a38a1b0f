//go:build unix

package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// FileStore keeps each server's sign-in in a file of its own in a
// directory (basis's is <config dir>/mcp-tokens), mode 0600 in a directory
// of mode 0700, written atomically. It refuses a directory or file that is
// a symbolic link, belongs to another user, or that group or others may
// read.
type FileStore struct {
	dir string
}

// NewFileStore returns the store in dir, made when first needed.
func NewFileStore(dir string) *FileStore { return &FileStore{dir: dir} }

// Dir returns the directory the store keeps its files in.
func (s *FileStore) Dir() string { return s.dir }

// fileToken is a stored file's content.
type fileToken struct {
	ServerURL    string    `json:"server_url"`
	Issuer       string    `json:"issuer,omitempty"`
	ClientID     string    `json:"client_id,omitempty"`
	ClientSecret string    `json:"client_secret,omitempty"`
	AuthURL      string    `json:"authorization_endpoint,omitempty"`
	TokenURL     string    `json:"token_endpoint"`
	AuthStyle    int       `json:"auth_style,omitempty"`
	Scopes       []string  `json:"scopes,omitempty"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// path is the file of serverURL: named by its hash, for a URL may hold
// what a file name cannot (and a credential in its query).
func (s *FileStore) path(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".json")
}

// storeError says what is wrong with the store's directory or a file in
// it, and what to do; cause is the operating system's reason, if any.
type storeError struct {
	text  string
	cause error
}

func (e *storeError) Error() string { return e.text }
func (e *storeError) Unwrap() error { return e.cause }

func storeProblem(text string, cause error) error { return &storeError{text: text, cause: cause} }

// private checks that fi, at path, is the user's own, no link, and
// readable by no one else.
func private(path string, fi fs.FileInfo, dir bool) error {
	kind := "file"
	if dir {
		kind = "directory"
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return storeProblem("the sign-in "+kind+" "+path+" is a symbolic link, which basis does not follow; remove it", nil)
	}
	if dir != fi.IsDir() || !dir && !fi.Mode().IsRegular() {
		return storeProblem(path+" is not a "+kind+"; remove it", nil)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return storeProblem("the sign-in "+kind+" "+path+" belongs to another user; remove it", nil)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		mode := "600"
		if dir {
			mode = "700"
		}
		return storeProblem(fmt.Sprintf("the sign-in %s %s may be read by group or others (mode %o); run: chmod %s %s", kind, path, fi.Mode().Perm(), mode, path), nil)
	}
	return nil
}

// checkDir checks the directory; create makes it when missing.
func (s *FileStore) checkDir(create bool) (exists bool, err error) {
	fi, err := os.Lstat(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return false, nil
		}
		if err := os.MkdirAll(filepath.Dir(s.dir), 0o700); err != nil {
			return false, storeProblem("the sign-in directory cannot be made: "+err.Error(), err)
		}
		if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, storeProblem("the sign-in directory cannot be made: "+err.Error(), err)
		}
		if fi, err = os.Lstat(s.dir); err != nil {
			return false, storeProblem("the sign-in directory cannot be read: "+err.Error(), err)
		}
	} else if err != nil {
		return false, storeProblem("the sign-in directory cannot be read: "+err.Error(), err)
	}
	return true, private(s.dir, fi, true)
}

// Load implements [Store].
func (s *FileStore) Load(_ context.Context, serverURL string) (*Token, error) {
	exists, err := s.checkDir(false)
	if err != nil || !exists {
		return nil, err
	}
	path := s.path(serverURL)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, storeProblem("the sign-in file "+path+" is a symbolic link, which basis does not follow; remove it", nil)
	case err != nil:
		return nil, storeProblem("the sign-in file "+path+" cannot be read: "+errors.Unwrap(err).Error(), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, storeProblem("the sign-in file "+path+" cannot be read", err)
	}
	if err := private(path, fi, false); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, storeProblem("the sign-in file "+path+" cannot be read", err)
	}
	var ft fileToken
	if err := json.Unmarshal(data, &ft); err != nil || ft.ServerURL != serverURL {
		// Not quoted: the file holds tokens.
		return nil, storeProblem("the sign-in file "+path+" is damaged; run basis mcp logout, then sign in again", nil)
	}
	return &Token{ServerURL: ft.ServerURL, Issuer: ft.Issuer, ClientID: ft.ClientID, ClientSecret: ft.ClientSecret,
		AuthURL: ft.AuthURL, TokenURL: ft.TokenURL, AuthStyle: ft.AuthStyle, Scopes: ft.Scopes,
		AccessToken: ft.AccessToken, RefreshToken: ft.RefreshToken, TokenType: ft.TokenType, Expiry: ft.Expiry}, nil
}

// Save implements [Store]: a new file of mode 0600 renamed over the
// old, so a reader sees the old sign-in or the new, never half of one.
func (s *FileStore) Save(_ context.Context, t *Token) error {
	if _, err := s.checkDir(true); err != nil {
		return err
	}
	data, err := json.Marshal(fileToken{ServerURL: t.ServerURL, Issuer: t.Issuer, ClientID: t.ClientID, ClientSecret: t.ClientSecret,
		AuthURL: t.AuthURL, TokenURL: t.TokenURL, AuthStyle: t.AuthStyle, Scopes: t.Scopes,
		AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry})
	if err != nil {
		return err
	}
	path := s.path(t.ServerURL)
	if fi, err := os.Lstat(path); err == nil {
		if err := private(path, fi, false); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*") // mode 0600
	if err != nil {
		return storeProblem("the sign-in cannot be stored: "+err.Error(), err)
	}
	defer os.Remove(tmp.Name()) // once renamed, nothing
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return storeProblem("the sign-in cannot be stored in "+s.dir+": "+err.Error(), err)
	}
	return nil
}

// Delete implements [Store].
func (s *FileStore) Delete(_ context.Context, serverURL string) error {
	exists, err := s.checkDir(false)
	if err != nil || !exists {
		return err
	}
	if err := os.Remove(s.path(serverURL)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storeProblem("the sign-in cannot be removed: "+err.Error(), err)
	}
	return nil
}
