//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// tracker records how many calls run at once.
type tracker struct {
	running, peak atomic.Int32
}

func (tr *tracker) enter() {
	n := tr.running.Add(1)
	for {
		p := tr.peak.Load()
		if n <= p || tr.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (tr *tracker) leave() { tr.running.Add(-1) }

func TestParallelCallsOverlap(t *testing.T) {
	const n = 4
	var started sync.WaitGroup
	started.Add(n)
	tool := newHostTool("fetch", contract.SideEffectNone)
	tool.desc.Parallel = true
	tool.execute = func(ctx context.Context, call contract.Call) (contract.Result, error) {
		// Each call waits until all have started: only calls that run at
		// the same time get past this.
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			return contract.Result{}, errors.New("the other calls never started: calls did not overlap")
		}
		return contract.Result{Text: string(call.Input)}, nil
	}
	rt := build(t, &runtime.Options{MaxParallel: n}, tool)
	var calls []runtime.BatchCall
	for i := range n {
		calls = append(calls, runtime.BatchCall{Name: "fetch", Call: contract.Call{ID: fmt.Sprint(i), Input: json.RawMessage(fmt.Sprintf(`{"text":"%d"}`, i))}})
	}
	outs := rt.CallBatch(t.Context(), calls)
	for i, out := range outs {
		if out.Status != runtime.StatusOK || out.CallID != fmt.Sprint(i) || out.Text != fmt.Sprintf(`{"text":"%d"}`, i) {
			t.Errorf("outcome %d: %v %s %q", i, out.Status, out.CallID, out.Text)
		}
	}
}

// In a synctest bubble every call that may run runs before any one's
// sleep ends: exclusive calls that overlapped would always be seen to.
func TestExclusiveCallsRunAloneAndInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr tracker
		var mu sync.Mutex
		var order []string
		record := func(name string) func(ctx context.Context, call contract.Call) (contract.Result, error) {
			return func(ctx context.Context, call contract.Call) (contract.Result, error) {
				tr.enter()
				defer tr.leave()
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				order = append(order, call.ID)
				mu.Unlock()
				if call.ID == "e2" {
					return contract.Result{}, errors.New("e2 failed")
				}
				return contract.Result{Text: name + " " + call.ID}, nil
			}
		}
		exclusive := newHostTool("write", contract.SideEffectNone)
		exclusive.execute = record("write")
		parallel := newHostTool("read", contract.SideEffectNone)
		parallel.desc.Parallel = true
		parallel.execute = record("read")
		rt := build(t, nil, exclusive, parallel)

		in := json.RawMessage(`{"text":"x"}`)
		calls := []runtime.BatchCall{
			{"write", contract.Call{ID: "e1", Input: in}},
			{"write", contract.Call{ID: "e2", Input: in}},
			{"write", contract.Call{ID: "e3", Input: in}},
		}
		outs := rt.CallBatch(t.Context(), calls)
		if p := tr.peak.Load(); p != 1 {
			t.Errorf("exclusive calls overlapped: %d at once", p)
		}
		if diff := cmp.Diff([]string{"e1", "e2", "e3"}, order); diff != "" {
			t.Errorf("exclusive calls ran out of order (-want +got):\n%s", diff)
		}
		got := []runtime.Status{outs[0].Status, outs[1].Status, outs[2].Status}
		if diff := cmp.Diff([]runtime.Status{runtime.StatusOK, runtime.StatusToolError, runtime.StatusOK}, got); diff != "" {
			t.Errorf("one failure must not stop the others (-want +got):\n%s", diff)
		}

		// A mixed turn: an exclusive call never overlaps the parallel ones
		// around it, and outcomes come back in call order.
		tr.peak.Store(0)
		order = nil
		calls = []runtime.BatchCall{
			{"read", contract.Call{ID: "r1", Input: in}},
			{"read", contract.Call{ID: "r2", Input: in}},
			{"write", contract.Call{ID: "e1", Input: in}},
			{"read", contract.Call{ID: "r3", Input: in}},
			{"nope", contract.Call{ID: "u1", Input: in}},
		}
		outs = rt.CallBatch(t.Context(), calls)
		var ids []string
		for _, o := range outs {
			ids = append(ids, o.CallID)
		}
		if diff := cmp.Diff([]string{"r1", "r2", "e1", "r3", "u1"}, ids); diff != "" {
			t.Errorf("outcomes out of call order (-want +got):\n%s", diff)
		}
		if i := indexOf(order, "e1"); i != 2 {
			t.Errorf("the exclusive call ran at position %d of %v, want after r1 and r2 and before r3", i, order)
		}
		if outs[4].Stage != runtime.StageUnknown {
			t.Errorf("unknown tool in a batch: %v", outs[4].Stage)
		}
	})
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
