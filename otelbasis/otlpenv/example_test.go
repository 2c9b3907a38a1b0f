//go:build unix

package otlpenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/otelbasis/otlpenv"
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

func ExampleNew() {
	// A host passes os.Environ(); this one names no collector, so New
	// makes nothing, and every method of the nil *Telemetry does nothing.
	environ := []string{"PATH=/usr/bin:/bin", "TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	tel, err := otlpenv.New(context.Background(), environ, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// What is left is exported at the end, within a bound: a collector
	// that does not answer cannot hold the host's exit.
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(ctx); err != nil {
			fmt.Println(err)
		}
	}()
	b := runtime.NewBuilder()
	if err := b.Add(lookup{}); err != nil {
		fmt.Println(err)
		return
	}
	rt, err := b.Build(&runtime.Options{Observer: tel.Observer()})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := rt.Call(tel.Parent(context.Background()), "lookup", contract.Call{ID: "call-1", Input: json.RawMessage(`{}`)})
	fmt.Println(out.Status, tel == nil)
	// Output:
	// ok true
}
