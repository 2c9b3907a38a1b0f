//go:build unix

package otelbasis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/otelbasis"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// lookup is a host's tool that only reads: the gate passes it unasked.
type lookup struct{}

func (lookup) Descriptor() contract.Descriptor {
	return contract.Descriptor{Name: "lookup", Description: "Look a word up.", InputSchema: json.RawMessage(`{"type":"object"}`),
		SideEffect: contract.SideEffectNone, Binding: contract.BindingHost}
}

func (lookup) AuthorizationPreview(context.Context, contract.Call) (contract.Preview, error) {
	return contract.Preview{SideEffect: contract.SideEffectNone, Subject: json.RawMessage(`{"tool":"lookup"}`), Summary: "look up"}, nil
}

func (lookup) Execute(context.Context, contract.Call) (contract.Result, error) {
	return contract.Result{Text: "found"}, nil
}

func ExampleNewObserver() {
	// A host's providers; here, spans kept in memory. A real host
	// exports them (otlptracehttp, say) with a batching processor.
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())

	obs, err := otelbasis.NewObserver(tp, mp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	b := runtime.NewBuilder()
	if err := b.Add(lookup{}); err != nil {
		fmt.Println(err)
		return
	}
	rt, err := b.Build(&runtime.Options{Observer: obs})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := rt.Call(context.Background(), "lookup", contract.Call{ID: "call-1", Input: json.RawMessage(`{}`)})
	fmt.Println(out.Status)

	var names []string
	for _, s := range spans.GetSpans() {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	fmt.Println(names)
	// Output:
	// ok
	// [basis.execute basis.gate basis.preview execute_tool lookup]
}
