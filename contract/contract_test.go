package contract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/basis-go/basis/contract"
)

func TestSideEffectText(t *testing.T) {
	tests := []struct {
		effect        contract.SideEffect
		text          string
		consequential bool
	}{
		{contract.SideEffectNone, "none", false},
		{contract.SideEffectLocalState, "local_state", true},
		{contract.SideEffectProcess, "process", true},
		{contract.SideEffectExternal, "external", true},
	}
	for _, tt := range tests {
		if got := tt.effect.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		if got := tt.effect.Consequential(); got != tt.consequential {
			t.Errorf("%s.Consequential() = %v, want %v", tt.text, got, tt.consequential)
		}
		raw, err := json.Marshal(tt.effect)
		if err != nil || string(raw) != `"`+tt.text+`"` {
			t.Errorf("json.Marshal(%s) = %s, %v", tt.text, raw, err)
		}
		var back contract.SideEffect
		if err := json.Unmarshal(raw, &back); err != nil || back != tt.effect {
			t.Errorf("json round trip of %s = %v, %v", tt.text, back, err)
		}
	}
}

func TestSideEffectOrdered(t *testing.T) {
	if !(contract.SideEffectNone < contract.SideEffectLocalState &&
		contract.SideEffectLocalState < contract.SideEffectProcess &&
		contract.SideEffectProcess < contract.SideEffectExternal) {
		t.Fatal("side effects are not ordered from weakest to strongest")
	}
}

func TestSideEffectRejectsUnknown(t *testing.T) {
	for _, text := range []string{"", "read_only", "NONE", "process "} {
		_, err := contract.ParseSideEffect(text)
		if err == nil || !strings.Contains(err.Error(), "want one of none, local_state, process, external") {
			t.Errorf("ParseSideEffect(%q) error = %v, want one listing the side effects", text, err)
		}
	}
	var s contract.SideEffect
	if err := json.Unmarshal([]byte(`"secret-value"`), &s); err == nil || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("unmarshal of an unknown word: error %v must exist and not quote the value", err)
	}
	if _, err := json.Marshal(contract.SideEffect(9)); err == nil {
		t.Error("marshalling an out-of-range SideEffect succeeded")
	}
	if got := contract.SideEffect(9).String(); got != "SideEffect(9)" {
		t.Errorf("String of out-of-range = %q", got)
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
		says  string
	}{
		{"a", true, ""},
		{"jenkins_job", true, ""},
		{"Deploy-2", true, ""},
		{strings.Repeat("x", 64), true, ""},
		{strings.Repeat("x", 65), false, "65 characters"},
		{"", false, "empty"},
		{"has space", false, "character 4"},
		{"dot.name", false, "character 4"},
		{"ünïcode", false, "character 1"},
		{"slash/", false, "character 6"},
	}
	for _, tt := range tests {
		err := contract.CheckName(tt.name)
		if got := contract.ValidName(tt.name); got != tt.valid {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.valid)
		}
		if tt.valid {
			if err != nil {
				t.Errorf("CheckName(%q) = %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, contract.ErrInvalidName) || !strings.Contains(err.Error(), tt.says) || tt.name != "" && strings.Contains(err.Error(), tt.name) {
			t.Errorf("CheckName(%q) = %v, want ErrInvalidName saying %q", tt.name, err, tt.says)
		}
	}
}

func TestIsMCPName(t *testing.T) {
	if !contract.IsMCPName("mcp__github__search") || contract.IsMCPName("mcp_x") || contract.IsMCPName("my_mcp__x") {
		t.Error("IsMCPName does not match exactly the mcp__ prefix")
	}
}

func TestCanonicalJSON(t *testing.T) {
	type subject struct {
		Tool    string          `json:"tool"`
		Command []string        `json:"command"`
		Input   map[string]any  `json:"input"`
		Raw     json.RawMessage `json:"raw"`
	}
	v := subject{
		Tool:    "t",
		Command: []string{"go", "test", "&&", "<x>"},
		Input:   map[string]any{"z": 1, "a": "b"},
		Raw:     json.RawMessage(`{"y": 1.50, "b": [true, null]}`),
	}
	got, err := contract.CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"command":["go","test","&&","<x>"],"input":{"a":"b","z":1},"raw":{"b":[true,null],"y":1.50},"tool":"t"}`
	if string(got) != want {
		t.Errorf("CanonicalJSON =\n%s\nwant\n%s", got, want)
	}
	again, _ := contract.CanonicalJSON(json.RawMessage(got))
	if string(again) != want {
		t.Errorf("canonical form is not stable: %s", again)
	}
	if _, err := contract.CanonicalJSON(func() {}); err == nil {
		t.Error("CanonicalJSON of a func succeeded")
	}
}

func TestProgress(t *testing.T) {
	ctx := context.Background()
	contract.Progress(ctx, "dropped") // no hook: nothing happens, nothing panics
	if contract.HasProgress(ctx) {
		t.Error("HasProgress on a bare context")
	}
	var mu sync.Mutex
	var lines []string
	ctx = contract.WithProgress(ctx, func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() })
	if !contract.HasProgress(ctx) {
		t.Error("HasProgress after WithProgress = false")
	}
	contract.Progress(ctx, "one")
	contract.Progress(ctx, "two")
	if strings.Join(lines, ",") != "one,two" {
		t.Errorf("lines = %q", lines)
	}
	off := contract.WithProgress(ctx, nil)
	contract.Progress(off, "three")
	if contract.HasProgress(off) || len(lines) != 2 {
		t.Error("a nil hook did not remove the hook")
	}
}

func TestDelegationDepth(t *testing.T) {
	ctx := context.Background()
	if d := contract.DelegationDepth(ctx); d != 0 {
		t.Errorf("default depth = %d", d)
	}
	if d := contract.DelegationDepth(contract.WithDelegationDepth(ctx, 2)); d != 2 {
		t.Errorf("depth = %d, want 2", d)
	}
	if d := contract.DelegationDepth(contract.WithDelegationDepth(ctx, -4)); d != 0 {
		t.Errorf("negative depth stored as %d, want 0", d)
	}
}

func TestCallID(t *testing.T) {
	ctx := context.Background()
	if id := contract.CallID(ctx); id != "" {
		t.Errorf("CallID of a bare context = %q", id)
	}
	withID := contract.WithCallID(ctx, "call-1")
	if id := contract.CallID(withID); id != "call-1" {
		t.Errorf("CallID = %q, want call-1", id)
	}
	if id := contract.CallID(contract.WithCallID(withID, "call-2")); id != "call-2" {
		t.Errorf("a nested call's ID = %q, want call-2", id)
	}
	if id := contract.CallID(contract.WithCallID(withID, "")); id != "" {
		t.Errorf("a nested call without an ID has its enclosing call's, %q", id)
	}
	if got := contract.WithCallID(ctx, ""); got != ctx {
		t.Error("an empty ID with none to hide made a new context")
	}
}

func TestResultErrorKeepsResult(t *testing.T) {
	cause := errors.New("the tool failed")
	res := contract.Result{Text: "bad", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"bad"}`)}}
	var err error = &contract.ResultError{Result: res, Err: cause}
	err = fmt.Errorf("wrapped: %w", err)
	var re *contract.ResultError
	if !errors.As(err, &re) {
		t.Fatal("errors.As found no *ResultError")
	}
	if !errors.Is(err, cause) || re.Error() != "the tool failed" {
		t.Errorf("Error() = %q, errors.Is(cause) = %v", re.Error(), errors.Is(err, cause))
	}
	if !reflect.DeepEqual(re.Result, res) {
		t.Errorf("Result = %+v, want %+v", re.Result, res)
	}
}

func TestProgressStepsAndLog(t *testing.T) {
	// Without a step hook, a step is a line.
	var lines []string
	ctx := contract.WithProgress(context.Background(), func(l string) { lines = append(lines, l) })
	contract.ReportProgress(ctx, contract.ProgressStep{Progress: 50, Total: 100, Message: "half"})
	contract.ReportProgress(ctx, contract.ProgressStep{Progress: 3})
	if want := []string{"half (50/100)", "3"}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %q, want %q", lines, want)
	}
	// With one, the step goes there as counted, and not as a line.
	var steps []contract.ProgressStep
	ctx = contract.WithProgressSteps(ctx, func(s contract.ProgressStep) { steps = append(steps, s) })
	contract.ReportProgress(ctx, contract.ProgressStep{Progress: 1, Total: 2})
	if want := []contract.ProgressStep{{Progress: 1, Total: 2}}; !reflect.DeepEqual(steps, want) || len(lines) != 2 {
		t.Errorf("steps %v, lines %q", steps, lines)
	}
	if !contract.HasProgress(contract.WithProgressSteps(context.Background(), func(contract.ProgressStep) {})) {
		t.Error("a step hook is no progress hook")
	}
	if contract.LogLevel(context.Background()) != "" {
		t.Error("a log level without a hook")
	}
	var got []contract.LogMessage
	ctx = contract.WithLog(context.Background(), "info", func(m contract.LogMessage) { got = append(got, m) })
	contract.Log(ctx, contract.LogMessage{Level: "info", Logger: "github", Data: json.RawMessage(`"hi"`)})
	contract.Log(context.Background(), contract.LogMessage{Level: "info"}) // no hook: nothing
	if want := []contract.LogMessage{{Level: "info", Logger: "github", Data: json.RawMessage(`"hi"`)}}; contract.LogLevel(ctx) != "info" || !reflect.DeepEqual(got, want) {
		t.Errorf("log messages %v at level %q, want %v at info", got, contract.LogLevel(ctx), want)
	}
	if contract.LogLevel(contract.WithLog(ctx, "", nil)) != "" {
		t.Error("an empty level does not remove the hook")
	}
}
