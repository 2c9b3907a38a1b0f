package contract

import "context"

type progressKey struct{}

type depthKey struct{}

// WithProgress returns a context whose progress lines go to fn. Tools call
// [Progress] as long work advances (a program's stderr, a command's output);
// the host decides where the lines go — a terminal, an MCP progress
// notification, nowhere. fn may be called from several goroutines at once
// and must not block for long. A nil fn removes the hook.
func WithProgress(ctx context.Context, fn func(line string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// Progress sends one line to the context's progress hook, if there is one.
func Progress(ctx context.Context, line string) {
	if fn, _ := ctx.Value(progressKey{}).(func(string)); fn != nil {
		fn(line)
	}
}

// HasProgress reports whether the context carries a progress hook (for
// lines, or for steps: [WithProgressSteps]), so a tool can skip work whose
// only use is progress.
func HasProgress(ctx context.Context) bool {
	fn, _ := ctx.Value(progressKey{}).(func(string))
	steps, _ := ctx.Value(stepsKey{}).(func(ProgressStep))
	return fn != nil || steps != nil
}

// WithDelegationDepth returns a context recording that the current work runs
// at delegation depth depth: 0 for the top-level agent, 1 for a task it
// delegated, and so on. Negative values are stored as 0.
func WithDelegationDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, depthKey{}, max(depth, 0))
}

// DelegationDepth returns the depth recorded by [WithDelegationDepth], or 0.
func DelegationDepth(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

type callIDKey struct{}

// WithCallID returns a context for work on the call whose [Call] ID is
// id. The runtime gives it to a call's preview, definition and execution,
// so that a tool asked for its [Definer.Definition] can tell which of its
// calls the definition will judge: a tool whose preview worked something
// out for that call (a sandbox's confinement, say) describes that, the
// same thing its run uses, instead of working it out again. An empty id
// says the work is for no call with an ID, hiding an enclosing call's.
func WithCallID(ctx context.Context, id string) context.Context {
	if id == "" && CallID(ctx) == "" {
		return ctx
	}
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the ID recorded by [WithCallID], or "".
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
