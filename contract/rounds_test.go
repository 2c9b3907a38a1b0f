package contract_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/basis-go/basis/contract"
)

func TestInputRounds(t *testing.T) {
	// Without a hook a report is dropped.
	contract.ReportInputRound(context.Background(), contract.InputRound{Asker: "s"})
	var got []contract.InputRound
	ctx := contract.WithInputRounds(context.Background(), func(r contract.InputRound) { got = append(got, r) })
	want := []contract.InputRound{{Asker: "s", Keys: []string{"a"}}, {Asker: "s", Keys: []string{"b", "c"}}}
	for _, r := range want {
		contract.ReportInputRound(ctx, r)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hook got %v, want %v", got, want)
	}
	contract.ReportInputRound(contract.WithInputRounds(ctx, nil), contract.InputRound{Asker: "x"})
	if len(got) != 2 {
		t.Errorf("a removed hook still heard a round: %v", got)
	}
}
