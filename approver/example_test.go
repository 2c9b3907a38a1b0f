//go:build unix

package approver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
)

// spawnCall is what the spawn tool's preview says about a command.
func spawnCall(subject string) contract.Preview {
	return contract.Preview{SideEffect: contract.SideEffectProcess, Subject: []byte(subject)}
}

func Example() {
	dir, err := os.MkdirTemp("", "rules-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	// load writes one layer's rules file and reads it as that layer.
	load := func(name, text string, scope approver.Scope) []approver.Rule {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			panic(err)
		}
		loaded, err := approver.LoadRules(ctx, path, scope)
		if err != nil {
			panic(err)
		}
		return loaded.Rules
	}
	operator := load("operator.json", `{"schema": 2, "rules": [
		{"tool": "spawn", "source": "builtin", "command": ["go", ["test", "vet"], "*"], "decision": "allow",
		 "match": ["go test ./...", "go vet ./..."], "not_match": ["go run ."]},
		{"tool": "spawn", "source": "builtin", "command": ["git", "push", "*"], "decision": "ask"},
		{"tool": "spawn", "command": ["curl", "*"], "decision": "allow"}
	]}`, approver.ScopeOperator)
	workspace := load("workspace.json", `{"schema": 2, "rules": [
		{"tool": "spawn", "pattern": "*curl*", "decision": "deny", "reason": "this repository never downloads; vendor the file instead"}
	]}`, approver.ScopeWorkspace)
	// Nobody is asked in this example: what no rule answers is denied.
	gate, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: append(operator, workspace...)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, subject := range []string{
		`{"body":"go test ./... && go vet ./...","commands":[["go","test","./..."],["go","vet","./..."]],"cwd":"/repo","mode":"command","target":"local"}`,
		`{"body":"go test ./... && curl x | sh","commands":[["go","test","./..."],["curl","x"],["sh"]],"cwd":"/repo","mode":"command","target":"local"}`,
		`{"body":"go test $(go list ./...)","commands":null,"cwd":"/repo","mode":"command","target":"local","unanalysable":"command substitution"}`,
		`{"body":"go vet ./... && git push","commands":[["go","vet","./..."],["git","push"]],"cwd":"/repo","mode":"command","target":"local"}`,
	} {
		v := gate.Authorize(ctx, approver.Request{CallID: "call_1", Tool: "spawn", Source: approver.BuiltinSource, Preview: spawnCall(subject)})
		fmt.Printf("%-5v %-8s %s\n", v.Allow, v.Source, strings.ReplaceAll(v.Reason, dir, "$DIR"))
	}
	// Output:
	// true  rule     allowed by operator rule 1 in $DIR/operator.json
	// false rule     tool spawn denied: this repository never downloads; vendor the file instead
	// false approver tool spawn denied: this run allows no consequential calls without a rule that allows them; the command line could not be analysed (command substitution), so no command rule can allow it
	// false approver tool spawn denied: this run allows no consequential calls without a rule that allows them; it was asked about because operator rule 2 in $DIR/operator.json (ask spawn command git push * from builtin) asks about every such call
}

func ExampleGate_sessionAnswers() {
	asked := 0
	person := approver.ApproverFunc(func(ctx context.Context, req approver.Request) (approver.Answer, error) {
		asked++
		return approver.Answer{Decision: approver.DenySession, Reason: "not on a Friday"}, nil
	})
	gate, _ := approver.NewGate(person, nil)
	deploy := contract.Preview{SideEffect: contract.SideEffectExternal, Subject: []byte(`{"command":["./deploy"],"cwd":"/repo","input":{},"tool":"deploy"}`)}
	for range 3 {
		v := gate.Authorize(context.Background(), approver.Request{Tool: "deploy", Source: "/repo/.basis/tools.json", Preview: deploy})
		fmt.Println(v.Allow, v.Source, v.Reason)
	}
	fmt.Println("asked", asked, "time")
	// Output:
	// false approver tool deploy denied: not on a Friday
	// false rule tool deploy denied: not on a Friday
	// false rule tool deploy denied: not on a Friday
	// asked 1 time
}

func ExampleLocalEditsNoNetwork() {
	policy := approver.LocalEditsNoNetwork(nil) // nobody to ask about the rest
	for _, effect := range []contract.SideEffect{contract.SideEffectLocalState, contract.SideEffectProcess, contract.SideEffectExternal} {
		a, _ := policy.Approve(context.Background(), approver.Request{Tool: "t", Preview: contract.Preview{SideEffect: effect}})
		fmt.Printf("%-11s %s\n", effect, a.Decision)
	}
	// Output:
	// local_state allow
	// process     deny
	// external    deny
}

func ExampleHook() {
	// A hook is any program: it reads the request as JSON on stdin and
	// prints its answer. This one denies every network call.
	hook := approver.Hook{Env: []string{"PATH=/usr/bin:/bin"}, Argv: []string{"/bin/sh", "-c", `
		if grep -q '"side_effect":"external"'; then
			echo '{"decision": "deny", "reason": "no network from here"}'
		else
			echo '{"decision": "allow"}'
		fi`}}
	for _, effect := range []contract.SideEffect{contract.SideEffectProcess, contract.SideEffectExternal} {
		a, err := hook.Approve(context.Background(), approver.Request{Tool: "t", Preview: contract.Preview{SideEffect: effect}})
		fmt.Printf("%s %q %v\n", a.Decision, a.Reason, err)
	}
	// Output:
	// allow "" <nil>
	// deny "no network from here" <nil>
}

func ExampleRulesFile() {
	dir, _ := os.MkdirTemp("", "basis-config")
	defer os.RemoveAll(dir)
	rules := &approver.RulesFile{Path: filepath.Join(dir, approver.OperatorRulesFile)}
	added, _ := rules.Add(approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow})
	again, _ := rules.Add(approver.Rule{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow})
	fmt.Println("added:", added, "added again:", again)
	_, _ = rules.Add(approver.Rule{Tool: "deploy", Source: "/repo/.basis/tools.json", Reason: "deploys go through CI"})
	data, _ := os.ReadFile(rules.Path)
	fmt.Print(string(data))
	list, _ := approver.LoadRules(context.Background(), rules.Path, approver.ScopeOperator)
	for _, r := range list.Rules {
		fmt.Println(r.Number, r)
	}
	// Output:
	// added: true added again: false
	// {
	//   "schema": 2,
	//   "rules": [
	//     {"tool":"spawn","source":"builtin","command":["go","test","*"],"decision":"allow"},
	//     {"tool":"deploy","source":"/repo/.basis/tools.json","decision":"deny","reason":"deploys go through CI"}
	//   ]
	// }
	// 1 allow spawn command go test * from builtin
	// 2 deny deploy from /repo/.basis/tools.json
}

// A call that no rule allows: Explain lists the rules that matched and the
// rule that would allow the call, without asking anyone.
func ExampleGate_Explain() {
	gate, _ := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: []approver.Rule{
		{Tool: "spawn", Source: approver.BuiltinSource, Command: approver.Words("go", "test", "*"), Decision: approver.RuleAllow},
	}})
	e := gate.Explain(approver.Request{Tool: "spawn", Source: approver.BuiltinSource, Preview: spawnCall(
		`{"body":"go test ./... | tail -1","commands":[["go","test","./..."],["tail","-1"]],"cwd":"/repo","mode":"command","target":"local"}`)})
	for _, m := range e.Matches {
		fmt.Println("matched:", m)
	}
	fmt.Println("decided by rules:", e.Decided)
	fmt.Println(e.Gap)
	for _, r := range e.Allow {
		fmt.Println(r.AddCommand())
	}
	// Output:
	// matched: allow spawn command go test * from builtin
	// decided by rules: false
	// no rule allows the command tail -1
	// basis rules add --tool spawn --source builtin --command 'tail *' --allow --match 'tail -1'
}

// authorizeFromFile is the README's example: the rules of one file in front of an
// approver that denies what no rule answers, asked about one call.
func authorizeFromFile(ctx context.Context, path string, preview contract.Preview, input json.RawMessage) error {
	rules, err := approver.LoadRules(ctx, path, approver.ScopeOperator)
	if err != nil {
		return err // every problem, each a *configfile.Error with file, line and rule
	}
	gate, err := approver.NewGate(approver.DenyAll(), &approver.GateOptions{Rules: rules.Rules})
	if err != nil {
		return err
	}
	v := gate.Authorize(ctx, approver.Request{
		Tool: "spawn", Source: approver.BuiltinSource, Preview: preview, Input: input,
	})
	if !v.Allow {
		fmt.Println(v.Reason) // what the model reads
	}
	return nil
}

func ExampleLoadRules() {
	dir, err := os.MkdirTemp("", "rules-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, approver.OperatorRulesFile)
	rules := `{"schema": 2, "rules": [
		{"tool": "spawn", "source": "builtin", "command": ["git", "push", "*"], "decision": "deny", "reason": "push from your own terminal"}
	]}`
	if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	push := spawnCall(`{"body":"git push","commands":[["git","push"]],"cwd":"/repo","mode":"command","target":"local"}`)
	if err := authorizeFromFile(context.Background(), path, push, json.RawMessage(`{"command":"!git push"}`)); err != nil {
		fmt.Println(err)
	}
	// Output: tool spawn denied: push from your own terminal
}
