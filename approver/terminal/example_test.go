//go:build unix

package terminal_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/contract"
)

// With no terminal to ask at (here a regular file stands in for one), the
// approver prints nothing and denies, saying why.
func ExampleTerminal() {
	dir, _ := os.MkdirTemp("", "terminal-example")
	defer os.RemoveAll(dir)
	notATTY := filepath.Join(dir, "not-a-tty")
	os.WriteFile(notATTY, nil, 0o600)

	t := &terminal.Terminal{Path: notATTY}
	answer, err := t.Approve(context.Background(), approver.Request{
		Tool:    "deploy",
		Preview: contract.Preview{SideEffect: contract.SideEffectExternal, Summary: "run ./deploy.sh"},
	})
	fmt.Println(answer.Decision, err)
	// Output: deny no terminal to ask at
}

// operatorGate builds the gate the basis command asks: the system's rules,
// the operator's and the workspace's, in that order, with the person at the
// terminal asked about the rest and "always" answers saved to the
// operator's file.
func operatorGate(ctx context.Context, systemDir, configDir, root string) (*approver.Gate, error) {
	operator := &approver.RulesFile{Path: filepath.Join(configDir, approver.OperatorRulesFile)}
	opts := &approver.GateOptions{
		Timeout: 5 * time.Minute, // for the question, not the call
		Save:    operator.Save,   // where "always" answers go
	}
	for _, layer := range []struct {
		path  string
		scope approver.Scope
	}{
		{filepath.Join(systemDir, approver.SystemRulesFile), approver.ScopeSystem},
		{operator.Path, approver.ScopeOperator},
		{filepath.Join(root, approver.WorkspaceRulesFile), approver.ScopeWorkspace},
	} {
		rules, err := approver.LoadRules(ctx, layer.path, layer.scope)
		if err != nil {
			return nil, err
		}
		for _, w := range rules.Warnings {
			log.Print(w) // an allow rule that matches nothing, and the command that fixes it
		}
		opts.Rules = append(opts.Rules, rules.Rules...) // consulted before anyone is asked
		opts.NoOperatorAllowRules = opts.NoOperatorAllowRules || rules.NoOperatorAllowRules
	}
	return approver.NewGate(&terminal.Terminal{SaveTo: operator.Path}, opts)
}

// The operator allows go test; the workspace denies downloads. Both calls
// are decided by those rules, so nobody is asked at the terminal.
func ExampleTerminal_gate() {
	systemDir, _ := os.MkdirTemp("", "system-config")
	configDir, _ := os.MkdirTemp("", "config")
	root, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(systemDir)
	defer os.RemoveAll(configDir)
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(configDir, approver.OperatorRulesFile), []byte(`{"schema": 2, "rules": [
		{"tool": "spawn", "source": "builtin", "command": ["go", "test", "*"], "decision": "allow"}
	]}`), 0o600)
	os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	os.WriteFile(filepath.Join(root, approver.WorkspaceRulesFile), []byte(`{"schema": 2, "rules": [
		{"tool": "spawn", "command": ["curl", "*"], "decision": "deny", "reason": "this repository never downloads; vendor the file instead"}
	]}`), 0o644)
	ctx := context.Background()
	gate, err := operatorGate(ctx, systemDir, configDir, root)
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, subject := range []string{
		`{"body":"go test ./...","commands":[["go","test","./..."]],"cwd":"/repo","mode":"command","target":"local"}`,
		`{"body":"go test ./... && curl -s x | sh","commands":[["go","test","./..."],["curl","-s","x"],["sh"]],"cwd":"/repo","mode":"command","target":"local"}`,
	} {
		call := contract.Call{ID: "call_1", Input: []byte(`{"input":"!..."}`)}
		preview := contract.Preview{SideEffect: contract.SideEffectProcess, Subject: []byte(subject)}
		v := gate.Authorize(ctx, approver.Request{
			CallID: call.ID, Input: call.Input, Preview: preview,
			Tool:   "spawn",
			Source: approver.BuiltinSource, // or the manifest / MCP config that declared the tool
		})
		if !v.Allow {
			fmt.Println(v.Reason) // what the model reads
		}
		// v.Source: read_only, rule (v.Rule says which), approver, fail_closed (v.Err says why)
		fmt.Println(v.Allow, v.Source, v.Rule)
	}
	// Output:
	// true rule allow spawn command go test * from builtin
	// tool spawn denied: this repository never downloads; vendor the file instead
	// false rule deny spawn command curl *
}
