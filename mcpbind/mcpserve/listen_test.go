package mcpserve_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectListening is client.Connect returning only once the server has
// subscribed the session to the list changes the client asked for. From
// protocol 2026-07-28 on, Connect sends subscriptions/listen and returns
// without waiting for the server's answer: a change made before the server
// subscribed the session is never sent to it, and a test that changes a
// list right after connecting would wait for a notification in vain.
func connectListening(ctx context.Context, client *mcp.Client, tr mcp.Transport, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, error) {
	var asked atomic.Bool
	acked := make(chan struct{}, 1)
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "subscriptions/listen" {
				asked.Store(true)
			}
			return next(ctx, method, req)
		}
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if _, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(ctx, tr, opts)
	if err != nil || !asked.Load() {
		return cs, err
	}
	select {
	case <-acked:
		return cs, nil
	case <-time.After(30 * time.Second): // a bound, not a wait
		cs.Close()
		return nil, errors.New("the server never acknowledged subscriptions/listen")
	}
}
