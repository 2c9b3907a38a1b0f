//go:build unix

package runtime

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/basis-go/basis/contract"
)

// BatchCall is one call of a model turn: the tool's name and the call.
type BatchCall struct {
	Name string
	Call contract.Call
}

// CallBatch runs the calls of one model turn and returns their outcomes in
// call order. Consecutive calls to tools whose descriptor says Parallel run
// concurrently (at most Options.MaxParallel at once); any other call runs
// alone, after everything before it has finished and before anything after
// it starts. One call's failure does not stop the others. The whole batch
// runs on the roster of the moment it started, whatever
// [Runtime.ReplaceSource] does meanwhile.
func (rt *Runtime) CallBatch(ctx context.Context, calls []BatchCall) []Outcome {
	ro := rt.roster.Load()
	out := make([]Outcome, len(calls))
	for i := 0; i < len(calls); {
		if !ro.parallel(calls[i].Name) {
			out[i] = rt.callIn(ctx, ro, calls[i].Name, calls[i].Call)
			i++
			continue
		}
		var g errgroup.Group
		g.SetLimit(rt.opts.MaxParallel)
		for ; i < len(calls) && ro.parallel(calls[i].Name); i++ {
			j := i // i is shared by the loop; each goroutine needs its own
			g.Go(func() error {
				out[j] = rt.callIn(ctx, ro, calls[j].Name, calls[j].Call)
				return nil // an outcome, never a reason to stop the others
			})
		}
		_ = g.Wait()
	}
	return out
}

// parallel reports whether a call may overlap others. A name no tool has
// is refused at once, so it overlaps nothing that matters.
func (ro *roster) parallel(name string) bool {
	r, ok := ro.byName[name]
	return !ok || r.desc.Parallel
}
