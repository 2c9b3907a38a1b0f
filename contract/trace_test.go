package contract_test

import (
	"context"
	"strings"
	"testing"

	"github.com/basis-go/basis/contract"
)

func TestWithTraceContext(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name string
		tc   contract.TraceContext
		want bool
	}{
		{"valid", contract.TraceContext{Parent: parent, State: "vendor=a,other=b"}, true},
		{"no state", contract.TraceContext{Parent: parent}, true},
		{"empty", contract.TraceContext{}, false},
		{"upper case", contract.TraceContext{Parent: strings.ToUpper(parent)}, false},
		{"newline in parent", contract.TraceContext{Parent: parent[:54] + "\n"}, false},
		{"parent too long", contract.TraceContext{Parent: parent + "-00"}, false},
		{"future version", contract.TraceContext{Parent: "01" + parent[2:]}, false},
		{"zero trace id", contract.TraceContext{Parent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, false},
		{"zero span id", contract.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}, false},
		{"NUL in state", contract.TraceContext{Parent: parent, State: "a=b\x00"}, false},
		{"newline in state", contract.TraceContext{Parent: parent, State: "a=b\nEVIL=1"}, false},
		{"state too long", contract.TraceContext{Parent: parent, State: strings.Repeat("a", 513)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := contract.TraceContextOf(contract.WithTraceContext(context.Background(), tt.tc))
			if ok != tt.want {
				t.Fatalf("carried = %v, want %v", ok, tt.want)
			}
			if ok && got != tt.tc {
				t.Errorf("carried %+v, want %+v", got, tt.tc)
			}
		})
	}
	if _, ok := contract.TraceContextOf(context.Background()); ok {
		t.Error("a bare context carries a trace context")
	}
}
