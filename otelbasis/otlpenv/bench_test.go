//go:build unix

package otlpenv

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
)

// quickTool answers at once: with it the observer's and exporter's cost
// is all there is to measure.
type quickTool struct{ tool }

func (quickTool) Execute(context.Context, contract.Call) (contract.Result, error) {
	return contract.Result{Text: "{}"}, nil
}

// BenchmarkExportOverNoObserver alternates, call by call, the same call
// through a runtime whose observer exports over OTLP/HTTP (New, as the
// basis command sets it up: batching span processor, periodic metric
// reader) to a receiver in this process, and through a runtime with no
// observer; it reports each median and their ratio (issue 26: at most
// 1.05×). bin-cat is a tool running /bin/cat, as a declared tool's
// program runs; in-process answers at once, which leaves the observer's
// own cost in plain sight (otel-ns/op).
func BenchmarkExportOverNoObserver(b *testing.B) {
	for _, bc := range []struct {
		name string
		tool contract.ExecutableTool
	}{{"bin-cat", tool{}}, {"in-process", quickTool{}}} {
		b.Run(bc.name, func(b *testing.B) {
			var exports atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/v1/traces" {
					exports.Add(1)
				}
				w.Header().Set("Content-Type", "application/x-protobuf")
			}))
			defer srv.Close()
			b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
			tel, err := New(b.Context(), os.Environ(), nil)
			if err != nil || tel == nil {
				b.Fatalf("New = %v, %v", tel, err)
			}
			on, off := newRuntimeOf(b, bc.tool, tel.Observer()), newRuntimeOf(b, bc.tool, nil)
			call := func(rt *runtime.Runtime) {
				out := rt.Call(b.Context(), "cat", contract.Call{ID: "bench", Input: json.RawMessage(`{}`)})
				if out.Status != runtime.StatusOK || out.Text != "{}" {
					b.Fatalf("call: %v %q", out.Status, out.Text)
				}
			}
			var with, without []time.Duration
			timed := func(rt *runtime.Runtime) time.Duration {
				t0 := time.Now()
				call(rt)
				return time.Since(t0)
			}
			// Which goes first alternates too: the second of two calls
			// finds what the first warmed.
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					with = append(with, timed(on))
					without = append(without, timed(off))
				} else {
					without = append(without, timed(off))
					with = append(with, timed(on))
				}
			}
			b.StopTimer()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				b.Fatalf("Shutdown: %v", err)
			}
			if exports.Load() == 0 {
				b.Fatal("the receiver was sent no spans: nothing was exported")
			}
			mw, mo := median(with), median(without)
			b.ReportMetric(float64(mw.Nanoseconds()), "exported-ns/op")
			b.ReportMetric(float64(mo.Nanoseconds()), "bare-ns/op")
			b.ReportMetric(float64((mw - mo).Nanoseconds()), "otel-ns/op")
			b.ReportMetric(float64(mw)/float64(mo), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
