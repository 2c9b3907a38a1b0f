package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/cmd/basis/runtime"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/sandbox"
	"github.com/basis-go/basis/spawn"
	basisws "github.com/basis-go/basis/workspace"
)

func cmdCall(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("call", "call NAME [JSON | @FILE | -] [--approve prompt|allow|deny|hook:ARGV] [--elicit decline|defaults|prompt] [--audit FILE] [--json]",
		`Runs one call through the whole pipeline — the input checked against the
tool's schema, the tool's preview, the approval gate, execution, audit — and
prints on stdout the text the model would read: the result, the failure or
the refusal. On a terminal, the tool's progress shows on stderr as one line
that is erased when the call ends.

The input is a JSON object: given as an argument, read from a file with
@FILE, or from stdin with -. Without one, the input is {}.

  --approve prompt|allow|deny|hook:ARGV
        who approves a call that no rule answers: ask at the terminal, allow,
        deny, or ask a program (ARGV, split into words as a shell would but
        never run by one; it reads the request as JSON on stdin and answers
        with {"decision": "allow"} or {"decision": "deny", "reason": "…"}).
        The default is prompt when stdin and stderr are terminals, deny
        otherwise.
  --elicit decline|defaults|prompt
        how a question an MCP server asks during the call (elicitation) is
        answered: decline it (basis then offers the server no questions at
        all), accept the form with its schema's defaults (a form with a
        required field without one is declined), or ask at the terminal —
        a form naming the server, defaults filled in, enums as choices; a
        page to open is shown and opened with $BROWSER if you agree. The
        default is prompt when stdin and stderr are terminals, decline
        otherwise. A server's request for a model's answer (sampling) is
        always declined: basis has no model.
  --audit FILE
        append the audit log to FILE as JSON lines: a record of each call
        as its tool is about to run, and one of how it ended; a call that
        would change something is refused when its record cannot be written.
        Inside the workspace (or another directory sandboxed programs may
        write) FILE is reached through no symbolic link.
  --json
        print one JSON object instead of the text: call_id, tool, status
        (ok, tool_error or refused), stage (of a refusal), text, truncated,
        exit (how the program ended, when it failed) and duration_ms

Exit status: 0 the tool succeeded, 1 it failed, 2 usage or configuration
error, 3 refused before running (unknown tool, invalid input, preview
refusal, denial, an audit record that could not be written), 128+N stopped
by signal N.
`)
	approve := c.fs.String("approve", "", "")
	elicitFlag := c.fs.String("elicit", "", "")
	auditPath := c.fs.String("audit", "", "")
	asJSON := c.fs.Bool("json", false, "")
	name, input, w, code := c.callTarget(ctx, g, args, e)
	if code >= 0 {
		return code
	}
	// The sandbox probes the kernel once per process (and makes the
	// network namespace confined programs share) and opens what every
	// ruleset names; the preview and the run would wait for it. Started
	// here, it runs while the call is set up: the manifest loaded, the
	// gate and the runtime built, the input checked.
	go sandbox.Warm(w.ws.SandboxPolicy(name, false))
	appr, err := chooseApprover(ctx, *approve, w, e)
	if err != nil {
		return usageErr(e, "call: %v", err)
	}
	elicit, err := chooseElicit(*elicitFlag, e)
	if err != nil {
		return usageErr(e, "call: %v", err)
	}
	if elicit != elicitDecline {
		w.elicit = elicit
	}
	gate, errs := w.newGate(ctx, appr)
	if len(errs) > 0 {
		return configErr(e, errs)
	}
	tel := startTelemetry(ctx, e)
	defer tel.close()
	ctx = tel.parent(ctx, e)
	w.tel = tel
	opts := &runtime.Options{Gate: gate, Observer: tel.observer()}
	if *auditPath != "" {
		f, code := w.openAudit("call", *auditPath)
		if code >= 0 {
			return code
		}
		defer f.Close()
		opts.Audit = f
		opts.OnAuditError = func(err error) { fmt.Fprintf(e.stderr, "basis: writing the audit record failed: %v\n", err) }
	}
	w.mcpStart, w.mcpTool = mcpForTool, name
	defer w.closeMCP()
	rt, errs := w.build(ctx, opts)
	if errs != nil {
		return configErr(e, errs)
	}
	if _, ok := rt.Tool(name); !ok {
		// An MCP tool whose server did not start is not unknown: say why.
		for _, n := range w.mcpNotes() {
			fmt.Fprintf(e.stderr, "basis: note: %s\n", n)
		}
		if err, failed := w.mcpStartError(); err != nil {
			if line, ok := signInLine(err); ok {
				fmt.Fprintln(e.stderr, line)
				return exitFailed
			}
			fmt.Fprintf(e.stderr, "basis: %s: %v\n", name, err)
			if failed {
				return exitFailed
			}
			return exitRefused
		}
	}
	callID := runtime.NewCallID("cli-")

	// Progress is shown only where it can be taken back: on a terminal,
	// as one line erased before the result. The result holds what the
	// model reads, and on a terminal it would otherwise repeat every line
	// already shown (a spawn command's output, a failed tool's stderr).
	var status *statusLine
	if e.progressWidth != nil {
		if width := e.progressWidth(); width > 0 {
			status = &statusLine{w: e.stderr, width: width, tool: name}
			ctx = contract.WithProgress(ctx, status.show)
		}
	}
	ctx = contract.WithDelegationDepth(ctx, w.depth)
	out := rt.Call(ctx, name, contract.Call{ID: callID, Input: input})
	if status != nil {
		status.clear()
	}

	if line, ok := signInLine(out.Err); ok && !*asJSON {
		// A server asked for sign-in (a step-up, say) that basis could
		// not run: the one thing to do is the whole message.
		fmt.Fprintln(e.stderr, line)
		return exitFailed
	}
	if *asJSON {
		if err := writeOutcomeJSON(e.stdout, out); err != nil {
			return usageErr(e, "call: writing the result: %v", err)
		}
	} else {
		fmt.Fprint(e.stdout, withNewline(out.Text))
	}
	switch out.Status {
	case runtime.StatusOK:
		if out.Truncated && !*asJSON {
			fmt.Fprintln(e.stderr, "basis: the result was truncated")
		}
		return exitOK
	case runtime.StatusToolError:
		if !*asJSON {
			fmt.Fprintf(e.stderr, "basis: %s failed\n", name)
		}
		return exitFailed
	case runtime.StatusRefused:
		if !*asJSON {
			fmt.Fprintf(e.stderr, "basis: refused (%s)\n", out.Stage)
		}
		return exitRefused
	}
	// An outcome that is none of the three is not a success.
	fmt.Fprintf(e.stderr, "basis: the call ended with no known status (%q)\n", string(out.Status))
	return exitFailed
}

// writeOutcomeJSON prints out as call --json does (runtime.Outcome's
// JSON form), the text as the tool gave it.
func writeOutcomeJSON(w io.Writer, out runtime.Outcome) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// callTarget reads what call and explain share: NAME [JSON | @FILE | -]
// and the workspace. A code of 0 or more is the exit status to return.
func (c *command) callTarget(ctx context.Context, g *globals, args []string, e *env) (string, json.RawMessage, *workspace, int) {
	args, code := c.parseArgs(args, 1, 2, e)
	if code >= 0 {
		return "", nil, nil, code
	}
	arg := "{}" // no input is the empty object
	if len(args) > 1 {
		arg = args[1]
	}
	input, err := runtime.ReadInput(ctx, arg, e.stdin)
	if err != nil {
		return "", nil, nil, usageErr(e, "%s: %v", c.name, err)
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return "", nil, nil, configErr(e, []error{err})
	}
	return args[0], input, w, -1
}

// chooseApprover maps --approve to an approver. Unset, it asks when
// somebody is at a terminal and denies, saying why, when nobody is.
func chooseApprover(ctx context.Context, mode string, w *workspace, e *env) (approver.Approver, error) {
	if argv, ok := strings.CutPrefix(mode, "hook:"); ok {
		words, err := spawn.SplitArgv(argv)
		if err != nil {
			return nil, fmt.Errorf("--approve hook: %w", err)
		}
		if len(words) == 0 {
			return nil, errors.New("--approve hook: name the program after hook:, as in --approve 'hook:./approve.sh --strict'")
		}
		// The hook is the operator's own program, but it holds no
		// secret it was not given: basis's own variables (the serve
		// token would let it answer around itself) and credentials
		// stay out, unless the operator's pass_env names them.
		return approver.Hook{Argv: words, Root: w.root, Env: e.environ, PassEnv: w.ws.PassEnv()}, nil
	}
	switch mode {
	case "prompt":
		return &terminal.Terminal{Path: e.tty}, nil
	case "allow":
		return approver.AllowAll(), nil
	case "deny":
		return approver.DenyAll(), nil
	case "":
		if e.interactive() {
			return &terminal.Terminal{Path: e.tty}, nil
		}
		return approver.ImmediateFunc(func(_ context.Context, req approver.Request) (approver.Answer, error) {
			return approver.Answer{Decision: approver.Deny, Reason: fmt.Sprintf(
				"%s was not run: nobody was asked, because basis is not attached to a terminal and --approve defaults to deny then; "+
					"rerun with --approve allow (or prompt, at a terminal), or allow it for good with: %s",
				req.Tool, basisws.AllowCommand(req))}, nil
		}), nil
	}
	return nil, fmt.Errorf("--approve %s: want prompt, allow, deny or hook:ARGV", mode)
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
