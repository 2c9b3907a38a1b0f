package signin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/basis-go/basis/mcpbind/internal/redact"
)

// Token is a server's sign-in as a [Store] keeps it: the tokens, and the
// client and endpoints that refresh them. Printing it in any way shows no
// token or secret.
type Token struct {
	// ServerURL is the server's URL, expanded: what the token is for.
	ServerURL string
	// Issuer is the authorization server that issued it (its RFC 9207
	// iss, else its authorization endpoint's origin).
	Issuer string
	// ClientID and ClientSecret are the client the token was issued to.
	ClientID, ClientSecret string
	// AuthURL and TokenURL are the authorization server's endpoints;
	// AuthStyle is an oauth2.AuthStyle.
	AuthURL, TokenURL string
	AuthStyle         int
	// Scopes are the scopes granted.
	Scopes []string
	// AccessToken, RefreshToken, TokenType and Expiry are the token.
	AccessToken, RefreshToken, TokenType string
	Expiry                               time.Time
}

const redacted = redact.Mark

// String names the server and issuer, never a token or secret.
func (t *Token) String() string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{ServerURL:%s Issuer:%s ClientID:%s AccessToken:%s RefreshToken:%s Expiry:%s}",
		redact.URL(t.ServerURL), t.Issuer, t.ClientID, redacted, redacted, t.Expiry.Format(time.RFC3339))
}

// GoString is String, for %#v.
func (t *Token) GoString() string { return "signin.Token" + t.String() }

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

// MarshalJSON encodes the token redacted; a [Store] writes its own
// encoding.
func (t *Token) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// Store keeps servers' sign-ins between runs. A host may supply its own
// (a keychain); [FileStore] is basis's.
type Store interface {
	// Load returns the sign-in stored for serverURL, nil when there is
	// none.
	Load(ctx context.Context, serverURL string) (*Token, error)
	// Save stores t under t.ServerURL, replacing what was there.
	Save(ctx context.Context, t *Token) error
	// Delete forgets serverURL's sign-in; none stored is no error.
	Delete(ctx context.Context, serverURL string) error
}

// State says whether a server is signed in, spelt as `basis mcp list`
// shows it.
type State string

const (
	// SignedIn: tokens are stored for the server's URL.
	SignedIn State = "signed in"
	// NeedsSignIn: the server's entry has "oauth" but no tokens are
	// stored, or they expired and cannot be refreshed.
	NeedsSignIn State = "needs sign-in"
	// NotRequired: a stdio server, or one that has not asked.
	NotRequired State = "not required"
)
