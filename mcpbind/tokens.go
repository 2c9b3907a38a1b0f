//go:build unix

package mcpbind

import (
	"github.com/basis-go/basis/mcpbind/signin"
	"golang.org/x/oauth2"
)

// TokensDirName is the directory of the operator config dir where basis
// keeps sign-ins: signin.NewFileStore(filepath.Join(configDir, TokensDirName)).
const TokensDirName = "mcp-tokens"

// tokenConfig is the client and endpoints that refresh t.
func tokenConfig(t *signin.Token) *oauth2.Config {
	return &oauth2.Config{ClientID: t.ClientID, ClientSecret: t.ClientSecret, Scopes: t.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: t.AuthURL, TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)}}
}

// oauth2Token is t's token.
func oauth2Token(t *signin.Token) *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
}
