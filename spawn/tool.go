//go:build unix

package spawn

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/subprocess"
)

// DepthEnv carries the delegation depth to a delegate that is a process:
// [CommandDelegator] sets it, and basis reads it from its own environment
// as its starting depth, so the bound holds across processes.
const DepthEnv = "BASIS_SPAWN_DEPTH"

// DepthFrom is the delegation depth a process starts at: [DepthEnv] in
// environ, as [CommandDelegator] set it for a delegate, or 0 when it is
// unset. A value that is no whole number, 0 or more, is an error.
func DepthFrom(environ []string) (int, error) {
	text, ok := subprocess.LookupEnv(environ, DepthEnv)
	if !ok || text == "" {
		return 0, nil
	}
	d, err := strconv.Atoi(text)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s must be a whole number, 0 or more; unset it to start at depth 0", DepthEnv)
	}
	return d, nil
}

// DefaultMaxDepth is the delegation depth bound when [Options.MaxDepth] is
// 0: the top-level agent (depth 0) and its subagents (depth 1) may
// delegate; a task arriving at depth 2 is refused.
const DefaultMaxDepth = 2

// DefaultCommandTimeout bounds a command when [Options.CommandTimeout] is 0.
const DefaultCommandTimeout = 10 * time.Minute

// descriptorSlack is how much longer than the command timeout the whole
// call may take: time for the group to be stopped (SIGTERM, grace,
// SIGKILL) and the output drained, so the command's own timeout, with its
// clearer message, fires first.
const descriptorSlack = subprocess.DefaultGrace + 3*time.Second

// Options is what a host decides about the spawn tool beyond its
// workspace root. A nil *Options means every default: commands on, no
// delegator, no targets, no sandbox.
type Options struct {
	// CommandEnv is the runtime's command environment ("NAME=value"),
	// added on top of the allowlisted ambient variables; later wins. A
	// local command's PATH, wherever it came from, keeps only its absolute
	// entries ([DefaultPath] when none is left).
	CommandEnv []string
	// Environ is the ambient environment the allowlist is taken from; nil
	// reads os.Environ() at each call.
	Environ []string
	// NoShell switches commands off: command mode is refused at the
	// preview, with a reason.
	NoShell bool
	// Delegator takes tasks. Nil refuses agent mode at the preview, saying
	// how to run a command instead.
	Delegator Delegator
	// DelegateArgv, when Delegator is nil, names the program that takes
	// tasks: a [CommandDelegator] running it in root with Environ
	// (os.Environ() when nil). Set at most one of the two.
	DelegateArgv []string
	// MaxDepth is the delegation depth bound: a task is refused when the
	// context's depth is MaxDepth or more. 0 means [DefaultMaxDepth].
	MaxDepth int
	// CommandTimeout bounds each command. 0 means [DefaultCommandTimeout].
	CommandTimeout time.Duration
	// Targets are the executors "!@name cmd" runs on, by name. A name is 1
	// to 64 of A-Z a-z 0-9 _ -, and not [LocalTarget] in any letter case
	// (it always means here); such a name, or a nil executor, makes [New] fail with an error
	// wrapping [errInvalidTarget]. The map is copied.
	Targets map[string]Executor
	// Sandbox, when set, confines every command that runs here (not on a
	// target, and not a task): it is asked, at each preview and each
	// Execute, for the confinement of tool [contract.SpawnName] with
	// network false (the host's sandbox decides whether spawn gets the
	// network) started in the workspace root. Its Subject is shown in the
	// preview's subject under "sandbox" and its Confine confines the run.
	// An error, or no usable confinement, refuses the command with a
	// *[Refusal] carrying the sandbox's own message: a command never runs
	// unconfined because its sandbox could not be had. Nil runs commands unconfined, and subjects have no "sandbox".
	Sandbox subprocess.Confiner
}

// Tool is the spawn tool: the model's one route to a shell command and to
// a subagent. It implements [contract.ExecutableTool] and is safe for
// concurrent use.
type Tool struct {
	root       string
	commandEnv []string
	environ    []string
	noShell    bool
	delegator  Delegator
	maxDepth   int
	timeout    time.Duration
	local      Executor
	targets    map[string]Executor
	names      []string // sorted target names
	sandbox    subprocess.Confiner
	descriptor contract.Descriptor
}

var _ contract.ExecutableTool = (*Tool)(nil)

// New builds the tool for the workspace at root, where local commands run
// ("" is this process's working directory; a relative root is made
// absolute now), with opts; nil opts means every default. A negative
// MaxDepth or CommandTimeout, a CommandEnv entry that is not NAME=value,
// or a target that cannot be registered is an error saying which.
func New(root string, opts *Options) (*Tool, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.MaxDepth < 0 || opts.CommandTimeout < 0 {
		return nil, fmt.Errorf("%w: MaxDepth and CommandTimeout must not be negative", errInvalidOptions)
	}
	for i, entry := range opts.CommandEnv {
		name, _, ok := strings.Cut(entry, "=")
		if !ok || name == "" || strings.IndexByte(entry, 0) >= 0 {
			// The position, never the value: it may be a credential.
			return nil, fmt.Errorf("%w: CommandEnv entry %d is not NAME=value without NUL bytes", errInvalidOptions, i)
		}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("%w: the workspace root cannot be made absolute: %w", errInvalidOptions, err)
	}
	delegator := opts.Delegator
	if len(opts.DelegateArgv) > 0 {
		if delegator != nil {
			return nil, fmt.Errorf("%w: set Delegator or DelegateArgv, not both", errInvalidOptions)
		}
		env := opts.Environ
		if env == nil {
			env = os.Environ()
		}
		delegator = CommandDelegator{Argv: slices.Clone(opts.DelegateArgv), Dir: root, Env: env}
	}
	t := &Tool{
		root:       root,
		commandEnv: slices.Clone(opts.CommandEnv),
		environ:    slices.Clone(opts.Environ),
		noShell:    opts.NoShell,
		delegator:  delegator,
		maxDepth:   cmp.Or(opts.MaxDepth, DefaultMaxDepth),
		timeout:    cmp.Or(opts.CommandTimeout, DefaultCommandTimeout),
		local:      localExecutor{},
		targets:    make(map[string]Executor, len(opts.Targets)),
		sandbox:    opts.Sandbox,
	}
	// In sorted order, so the error for several bad names is always the
	// same one.
	names := slices.Sorted(maps.Keys(opts.Targets))
	for _, name := range names {
		e := opts.Targets[name]
		switch {
		case !contract.ValidName(name):
			return nil, fmt.Errorf("%w: %q: a target name is 1 to %d of A-Z a-z 0-9 _ -", errInvalidTarget, name, contract.MaxNameLen)
		case strings.EqualFold(name, LocalTarget):
			return nil, fmt.Errorf("%w: %q is the word for running here and cannot name a target, in any letter case", errInvalidTarget, LocalTarget)
		case e == nil:
			return nil, fmt.Errorf("%w: target %q has no executor", errInvalidTarget, name)
		}
		t.targets[name] = e
	}
	t.names = names
	t.descriptor = t.describe()
	return t, nil
}

// Descriptor describes the tool. Its SideEffect is process, the stronger of
// a command's and a task's; it never runs beside other calls.
func (t *Tool) Descriptor() contract.Descriptor {
	d := t.descriptor
	d.Capabilities = slices.Clone(d.Capabilities)
	d.InputSchema = slices.Clone(d.InputSchema)
	return d
}

// AuthorizationPreview parses the call's input once and says what it would
// do. Its Subject is canonical JSON with the keys body, commands (see
// [AnalyzeCommands]; null when unanalysable and for a task), cwd, mode
// ("command" or "agent") and target ([LocalTarget] when none); when a
// command's commands is null, the key unanalysable says why (the
// [UnanalysableError]'s Reason), so a denial can say what stopped every
// rule. A command that runs here under [Options.Sandbox] adds the key
// sandbox (the confinement's Subject), and its Summary ends the
// preview's. An unknown target, commands switched off, a task with no
// delegator, a task at the depth bound and a command the sandbox cannot
// confine are refused here, as a *[Refusal] wrapping [contract.ErrRefused],
// so no approver is ever asked about them; input that cannot be parsed is
// an *[InputError] wrapping [contract.ErrInvalidInput].
func (t *Tool) AuthorizationPreview(ctx context.Context, call contract.Call) (contract.Preview, error) {
	p, err := t.plan(ctx, call)
	if err != nil {
		return contract.Preview{}, err
	}
	return p.preview()
}

// Execute parses the call's input once, refuses what the preview refuses
// (a check a missing gate removes is not a check), and runs the command or
// delegates the task.
//
// A command's result carries its stdout and stderr, labelled when both
// have something. A command that does not exit with code 0 — non-zero
// exit, signal, timeout, could not start — is a *[CommandError] whose text
// still carries the output and whose End says how it ended.
func (t *Tool) Execute(ctx context.Context, call contract.Call) (contract.Result, error) {
	p, err := t.plan(ctx, call)
	if err != nil {
		return contract.Result{}, err
	}
	if p.in.Mode == ModeAgent {
		return t.delegate(ctx, p)
	}
	return t.runCommand(ctx, p)
}

func (t *Tool) runCommand(ctx context.Context, p plan) (contract.Result, error) {
	req := CommandRequest{Body: p.in.Body, Target: p.in.Target, Dir: p.dir, Timeout: t.timeout}
	if p.confinement != nil {
		req.Confine = p.confinement.Confine
	}
	if p.in.Target == "" {
		req.Env = localEnv(t.environ, t.commandEnv)
	} else {
		req.Env = slices.Clone(t.commandEnv)
	}
	res, err := p.executor.RunCommand(ctx, req)
	if err != nil {
		where := "here"
		if p.in.Target != "" {
			where = "on target " + p.in.Target
		}
		return contract.Result{}, fmt.Errorf("spawn: the command could not be run %s: %w", where, err)
	}
	text, truncated := commandOutput(res)
	if !res.End.Success() {
		return contract.Result{}, &CommandError{
			Target:  p.in.Target,
			Output:  text,
			Timeout: t.timeout,
			End:     res.End,
		}
	}
	if text == "" {
		text = printedNothing
	}
	return contract.Result{Text: text, Truncated: truncated}, nil
}

func (t *Tool) delegate(ctx context.Context, p plan) (contract.Result, error) {
	answer, err := t.delegator.Delegate(contract.WithDelegationDepth(ctx, p.depth+1), p.in.Body)
	if err != nil {
		return contract.Result{}, fmt.Errorf("spawn: the subagent did not answer: %w", err)
	}
	if strings.TrimSpace(answer) == "" {
		answer = "the subagent finished and answered nothing"
	}
	return contract.Result{Text: answer}, nil
}

// decodeArguments reads the one string field of the call's arguments.
// The arguments are read strictly first (contract.CanonicalInput: one
// object, no key twice or twice in another letter case, bounded depth),
// and the key must be exactly "input": a lenient reader that took "Input"
// or the last of two "input" keys could differ from another reader of the
// same bytes.
func decodeArguments(raw json.RawMessage) (string, error) {
	form := `{"input": "!go test ./..."}: a JSON object with one string field "input"`
	canonical, err := contract.CanonicalInput(raw)
	if err != nil {
		return "", inputError("the arguments are not valid: "+strings.TrimPrefix(err.Error(), contract.ErrInvalidInput.Error()+": "), form)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(canonical, &fields); err != nil {
		return "", inputError("the arguments are not a JSON object", form)
	}
	value, ok := fields["input"]
	if !ok {
		return "", inputError("the arguments have no \"input\" field", form)
	}
	if len(fields) != 1 {
		return "", inputError("the arguments have fields other than \"input\"", form)
	}
	var input string
	// Unmarshal reads null into a string as "": only a JSON string is one.
	if value[0] != '"' || json.Unmarshal(value, &input) != nil {
		return "", inputError("the \"input\" field is not a string", form)
	}
	return input, nil
}
