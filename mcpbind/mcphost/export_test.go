//go:build unix

package mcphost

import "context"

// ErrTrustStore is the kind of every trust store problem, for the tests.
var ErrTrustStore = errTrustStore

// List returns the store's records, sorted by path.
func (t *TrustStore) List(ctx context.Context) ([]TrustRecord, error) { return t.list(ctx) }
