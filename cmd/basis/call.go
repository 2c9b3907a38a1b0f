package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/spawn"
)

func cmdCall(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("call", "call NAME [JSON | @FILE | -] [--approve prompt|allow|deny] [--audit FILE]",
		`Runs one call through the whole pipeline — the input checked against the
tool's schema, the tool's preview, the approval gate, execution, audit — and
prints the result on stdout. Progress lines go to stderr while it runs.

The input is a JSON object: given as an argument, read from a file with
@FILE, or from stdin with -. Without one, the input is {}.

  --approve prompt|allow|deny
        who approves a call that no rule answers: ask at the terminal, allow,
        or deny. The default is prompt when stdin and stderr are terminals,
        deny otherwise.
  --audit FILE
        append one JSON line per call to FILE

Exit status: 0 the tool succeeded, 1 it failed, 2 usage or configuration
error, 3 refused before running (unknown tool, invalid input, preview
refusal, denial).
`)
	approve := c.fs.String("approve", "", "")
	auditPath := c.fs.String("audit", "", "")
	args, code := c.parseArgs(args, 1, 2, e)
	if code >= 0 {
		return code
	}
	name := args[0]
	input, err := readInput(args[1:], e)
	if err != nil {
		return usageErr(e, "call: %v", err)
	}
	w, err := openWorkspace(g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	appr, err := chooseApprover(*approve, e)
	if err != nil {
		return usageErr(e, "call: %v", err)
	}
	rules, errs := w.loadRules()
	if len(errs) > 0 {
		return configErr(e, errs)
	}
	gate, err := approver.NewGate(appr, &approver.GateOptions{Rules: rules})
	if err != nil {
		return configErr(e, []error{err})
	}
	opts := &runtime.Options{Gate: gate}
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return usageErr(e, "call: cannot open the audit file: %v", err)
		}
		defer f.Close()
		opts.Audit = f
		opts.OnAuditError = func(err error) { fmt.Fprintf(e.stderr, "basis: writing the audit record failed: %v\n", err) }
	}
	rt, errs := w.build(opts)
	if errs != nil {
		return configErr(e, errs)
	}

	// Progress lines are labelled with the tool, so they read apart from
	// the result, which follows on stdout (and may repeat them: a spawn
	// command's output streams as it comes, then is the result).
	var mu sync.Mutex
	ctx = contract.WithProgress(ctx, func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(e.stderr, "[%s] %s\n", name, line)
	})
	ctx = contract.WithDelegationDepth(ctx, w.depth)
	out := rt.Call(ctx, name, contract.Call{ID: "cli", Input: input})
	switch out.Status {
	case runtime.StatusOK:
		fmt.Fprint(e.stdout, withNewline(out.Text))
		if out.Truncated {
			fmt.Fprintln(e.stderr, "basis: the result was truncated")
		}
		return exitOK
	case runtime.StatusToolError:
		fmt.Fprint(e.stderr, withNewline(out.Text))
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "refused (%s): %s", out.Stage, withNewline(out.Text))
	return exitRefused
}

// readInput returns the call's input: the argument, @FILE, - for stdin, or
// {} when there is none.
func readInput(args []string, e *env) (json.RawMessage, error) {
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	arg := args[0]
	var data []byte
	var err error
	switch {
	case arg == "-":
		data, err = io.ReadAll(e.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the input from stdin: %v", err)
		}
	case strings.HasPrefix(arg, "@"):
		data, err = os.ReadFile(arg[1:])
		if err != nil {
			return nil, fmt.Errorf("reading the input: %v", err)
		}
	default:
		data = []byte(arg)
	}
	return json.RawMessage(data), nil
}

// chooseApprover maps --approve to an approver. Unset, it asks when
// somebody is at a terminal and denies, saying why, when nobody is.
func chooseApprover(mode string, e *env) (approver.Approver, error) {
	switch mode {
	case "prompt":
		return &approver.Terminal{Path: e.tty}, nil
	case "allow":
		return approver.AllowAll, nil
	case "deny":
		return approver.DenyAll, nil
	case "":
		if e.interactive() {
			return &approver.Terminal{Path: e.tty}, nil
		}
		return approver.ApproverFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
			// Allowing spawn as a whole would allow every command, so the
			// advice for it is a command rule.
			rule := "basis rules add --tool " + req.Tool + " --allow"
			if req.Tool == spawn.Name {
				rule = "basis rules add --tool spawn --command 'WORDS *' --allow"
			}
			return approver.Answer{Decision: approver.Deny, Reason: fmt.Sprintf(
				"%s was not run: nobody was asked, because basis is not attached to a terminal and --approve defaults to deny then; "+
					"rerun with --approve allow (or prompt, at a terminal), or allow it for good with: %s",
				req.Tool, rule)}, nil
		}), nil
	}
	return nil, fmt.Errorf("--approve %s: want prompt, allow or deny", mode)
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
