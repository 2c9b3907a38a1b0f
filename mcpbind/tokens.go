//go:build unix

package mcpbind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/oauth2"
)

// Token is a server's sign-in as a [TokenStore] keeps it: the tokens, and
// the client and endpoints that refresh them. Printing it in any way
// shows no token or secret.
type Token struct {
	// ServerURL is the server's URL, expanded: what the token is for.
	ServerURL string
	// Issuer is the authorization server that issued it (its RFC 9207
	// iss, else its authorization endpoint's origin).
	Issuer string
	// ClientID and ClientSecret are the client the token was issued to
	// (a registered client's secret; never shown).
	ClientID, ClientSecret string
	// AuthURL and TokenURL are the authorization server's endpoints;
	// AuthStyle is how the client authenticates to TokenURL
	// (oauth2.AuthStyle).
	AuthURL, TokenURL string
	AuthStyle         int
	// Scopes are the scopes granted.
	Scopes []string
	// AccessToken, RefreshToken, TokenType and Expiry are the token.
	AccessToken, RefreshToken, TokenType string
	Expiry                               time.Time
}

func (t *Token) config() *oauth2.Config {
	return &oauth2.Config{ClientID: t.ClientID, ClientSecret: t.ClientSecret, Scopes: t.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: t.AuthURL, TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)}}
}

func (t *Token) oauth2() *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
}

// String names the server and issuer, never a token or secret.
func (t *Token) String() string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{ServerURL:%s Issuer:%s ClientID:%s AccessToken:%s RefreshToken:%s Expiry:%s}",
		redactURL(t.ServerURL), t.Issuer, t.ClientID, redacted, redacted, t.Expiry.Format(time.RFC3339))
}

// GoString is String, for %#v.
func (t *Token) GoString() string { return "mcpbind.Token" + t.String() }

// Format implements fmt.Formatter, redacted.
func (t *Token) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, t.GoString())
		return
	}
	fmt.Fprint(f, t.String())
}

// LogValue implements [slog.LogValuer], redacted.
func (t *Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// MarshalJSON encodes the token redacted; a [TokenStore] writes its own
// encoding.
func (t *Token) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// TokenStore keeps servers' sign-ins between runs. A host may supply its
// own (a keychain); [FileTokenStore] is basis's.
type TokenStore interface {
	// Load returns the sign-in stored for serverURL, nil when there is
	// none.
	Load(ctx context.Context, serverURL string) (*Token, error)
	// Save stores t under t.ServerURL, replacing what was there.
	Save(ctx context.Context, t *Token) error
	// Delete forgets serverURL's sign-in; none stored is no error.
	Delete(ctx context.Context, serverURL string) error
}

// TokensDirName is the directory of the operator config dir that
// [FileTokenStore] keeps its files in.
const TokensDirName = "mcp-tokens"

// FileTokenStore keeps each server's sign-in in a file of its own under
// <config dir>/mcp-tokens, mode 0600 in a directory of mode 0700, written
// atomically. It refuses a directory or file that is a symbolic link,
// belongs to another user, or that group or others may read.
type FileTokenStore struct {
	dir string
}

// NewFileTokenStore returns the store in configDir, the operator config
// dir.
func NewFileTokenStore(configDir string) *FileTokenStore {
	return &FileTokenStore{dir: filepath.Join(configDir, TokensDirName)}
}

// Dir returns the directory the store keeps its files in.
func (s *FileTokenStore) Dir() string { return s.dir }

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
func (s *FileTokenStore) path(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".json")
}

// errTokenStore: the store's directory or a file in it is unsafe or
// cannot be used.
var errTokenStore = errors.New("MCP token store cannot be used")

func storeProblem(text string, cause error) error {
	return &problem{kind: errTokenStore, cause: cause, text: text}
}

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
func (s *FileTokenStore) checkDir(create bool) (exists bool, err error) {
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

// Load implements [TokenStore].
func (s *FileTokenStore) Load(_ context.Context, serverURL string) (*Token, error) {
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

// Save implements [TokenStore]: a new file of mode 0600 renamed over the
// old, so a reader sees the old sign-in or the new, never half of one.
func (s *FileTokenStore) Save(_ context.Context, t *Token) error {
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

// Delete implements [TokenStore].
func (s *FileTokenStore) Delete(_ context.Context, serverURL string) error {
	exists, err := s.checkDir(false)
	if err != nil || !exists {
		return err
	}
	if err := os.Remove(s.path(serverURL)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storeProblem("the sign-in cannot be removed: "+err.Error(), err)
	}
	return nil
}
