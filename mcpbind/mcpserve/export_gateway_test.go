package mcpserve

import "context"

// ReloadIfChanged is one look at the watched files, for tests that edit a
// file and then reload, rather than wait for the interval.
func (g *Gateway) ReloadIfChanged(ctx context.Context) { g.reloadIfChanged(ctx, g.stamp()) }
