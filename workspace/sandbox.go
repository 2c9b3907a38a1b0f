//go:build unix

package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/sandbox"
	"github.com/basis-go/basis/subprocess"
)

// maxSandboxConfig bounds a sandbox.json: a few overrides are a few
// hundred bytes, so anything near this is not a sandbox config.
const maxSandboxConfig = 1 << 20

// checkSandbox is sandbox.Check: whether this machine can confine a
// program as a policy asks. Tests replace it to play a kernel without
// Landlock; nothing else does.
var checkSandbox = sandbox.Check

// sandboxes is how one invocation confines the programs it starts: the
// operator's sandbox.json, the workspace's tightening one, and one
// Sandbox per tool and network, made when first asked for.
type sandboxes struct {
	root      string
	operator  *sandbox.Config // nil: the default, workspace-write
	workspace *sandbox.Config // nil: nothing tightened
	// opFile is the operator's sandbox.json as messages name it.
	opFile string
	mu     sync.Mutex
	made   map[sandboxKey]*sandbox.Sandbox
}

type sandboxKey struct {
	tool     string
	network  bool
	readOnly bool
}

// workspaceSandboxFile is the workspace's sandbox config, relative to the
// root: it may only tighten the operator's.
var workspaceSandboxFile = filepath.Join(".basis", sandbox.ConfigFile)

// loadSandboxes reads <config dir>/sandbox.json and the workspace's
// .basis/sandbox.json. A missing file is no config; anything else wrong
// with either is a configuration problem, and nothing runs then.
func (w *Workspace) loadSandboxes(ctx context.Context) (*sandboxes, error) {
	s := &sandboxes{root: w.root, made: map[sandboxKey]*sandbox.Sandbox{}}
	var errs []error
	opPath := filepath.Join(w.configDir, sandbox.ConfigFile)
	s.opFile = w.DisplayPath(opPath)
	if data, err := readSandboxConfig(ctx, opPath); err != nil {
		errs = append(errs, err)
	} else if data != nil {
		if s.operator, err = sandbox.ParseConfig(w.DisplayPath(opPath), data, w.getenv("HOME")); err != nil {
			errs = append(errs, err)
		}
	}
	wsPath := filepath.Join(w.root, workspaceSandboxFile)
	if err := w.CheckInside(wsPath); err != nil {
		errs = append(errs, err)
	} else if data, err := readSandboxConfig(ctx, wsPath); err != nil {
		errs = append(errs, err)
	} else if data != nil {
		if s.workspace, err = sandbox.ParseWorkspaceConfig(w.DisplayPath(wsPath), data); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errors.Join(errs...)
}

// passEnv is the operator's "pass_env": the credential-looking variables
// every program basis starts inherits all the same. None without an
// operator sandbox.json (or before it was read).
func (s *sandboxes) passEnv() []string {
	if s == nil || s.operator == nil {
		return nil
	}
	return s.operator.PassEnv
}

// readSandboxConfig reads one sandbox.json the careful way; nil, nil
// when there is none.
func readSandboxConfig(ctx context.Context, path string) ([]byte, error) {
	data, err := configfile.Read(ctx, path, maxSandboxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the sandbox config cannot be read: %w", err)
	}
	return data, nil
}

// policy is what a program of tool gets: the operator's policy, tightened
// by the workspace's. network is what the tool declared.
func (s *sandboxes) policy(tool string, network bool) sandbox.Policy {
	return s.workspace.Tighten(s.operator.Policy(tool, network), tool)
}

// readOnlyPolicy is what the program of a tool whose manifest entry says
// "sandbox": "read-only" gets: read-only with limited reads and no
// network, within what the operator and the workspace allow it. held is
// false where the operator turned the sandbox off: the program then runs
// unconfined and is not read-only.
func (s *sandboxes) readOnlyPolicy(tool string) (p sandbox.Policy, held bool) {
	p = s.policy(tool, false)
	if effectiveMode(p.Mode) == sandbox.Off {
		return p, false
	}
	p.Mode, p.Network, p.LimitReads, p.Write = sandbox.ReadOnly, false, true, nil
	return p, true
}

// policyOf is policy or readOnlyPolicy, as key says.
func (s *sandboxes) policyOf(key sandboxKey) (p sandbox.Policy, readOnly bool) {
	if key.readOnly {
		return s.readOnlyPolicy(key.tool)
	}
	return s.policy(key.tool, key.network), false
}

// sandbox returns the tool's Sandbox, made once: a Sandbox may be shared
// by concurrent calls.
func (s *sandboxes) sandbox(key sandboxKey) (*sandbox.Sandbox, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb, ok := s.made[key]; ok {
		return sb, nil
	}
	p, _ := s.policyOf(key)
	sb, err := sandbox.New(p, s.root)
	if err != nil {
		return nil, err
	}
	s.made[key] = sb
	return sb, nil
}

// confine is the Sandbox hook of declared and spawn: the confinement of
// tool's program started in dir. A machine that cannot confine it as its
// policy asks refuses here, at the preview, with the sandbox's own
// message (which names the opt-out); it never runs unconfined.
func (s *sandboxes) confine(key sandboxKey, dir string) (*subprocess.Confinement, error) {
	policy, readOnly := s.policyOf(key)
	if err := checkSandbox(policy); err != nil {
		return nil, err
	}
	sb, err := s.sandbox(key)
	if err != nil {
		return nil, err
	}
	d := sb.Describe(dir)
	subject, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("the sandbox cannot be described: %w", err)
	}
	profile, err := json.Marshal(profileOf(sb.Policy(), d))
	if err != nil {
		return nil, fmt.Errorf("the sandbox cannot be described: %w", err)
	}
	c := &subprocess.Confinement{Confine: startUnconfined, Subject: subject, Summary: d.Summary(), Profile: profile,
		ReadOnly: readOnly, Refusal: s.refusal(key, policy, nil, 0)}
	switch {
	case effectiveMode(policy.Mode) == sandbox.Off:
	case key.tool == sandbox.SpawnTool || strings.HasPrefix(key.tool, "mcp__"):
		// Their bindings add no refusal line, and an MCP server runs
		// for the session: nothing to listen for.
		c.Confine = sb.Prepare
	default:
		// One Watch per call of a declared tool: where the operator
		// turned the kernel's audit on and basis may read it, the line
		// names what was refused.
		watch := sb.Watch()
		c.Confine = watch.Prepare
		c.Refused = func() string {
			denials, more := watch.Denials()
			return s.refusal(key, policy, denials, more)
		}
	}
	return c, nil
}

// refusal is the line a failed program's result ends with: the sandbox
// it ran in, what it refused where the kernel said (denials, and more
// besides them: Landlock's audit records, which basis reads only where
// the operator turned audit on and basis may read it), and the setting
// that allows what it may have been refused. Without denials it names
// the settings only: the kernel does not tell a program which access it
// refused.
func (s *sandboxes) refusal(key sandboxKey, p sandbox.Policy, denials []sandbox.Denial, more int) string {
	mode := effectiveMode(p.Mode)
	if mode == sandbox.Off {
		return ""
	}
	network := ", no network"
	if p.Network {
		network = ", network"
	}
	var advice []string
	switch {
	case key.readOnly:
		advice = append(advice, `a read-only tool writes only its TMPDIR and reads only the workspace, system directories and its program; to let it do more, take "sandbox": "read-only" out of its manifest entry`)
	case mode == sandbox.ReadOnly:
		advice = append(advice, fmt.Sprintf(`to let it write, the operator gives it "mode": %q in %s`, sandbox.WorkspaceWrite, s.opFile))
	default:
		advice = append(advice, fmt.Sprintf(`to let it write outside the workspace, add the directory to "write" in %s (.git, .basis and .mcp.json stay read-only)`, s.opFile))
	}
	if !p.Network && !key.readOnly {
		switch {
		case key.tool == sandbox.SpawnTool:
			advice = append(advice, fmt.Sprintf(`for the network, "spawn": {"network": true} in %s`, s.opFile))
		case strings.HasPrefix(key.tool, "mcp__"):
		default:
			advice = append(advice, `for the network, "network": true (with "side_effect": "external") in its manifest entry`)
		}
	}
	if len(denials) == 0 {
		return fmt.Sprintf("basis: the sandbox (%s%s) may have refused this: %s", mode, network, strings.Join(advice, "; "))
	}
	refused := make([]string, len(denials))
	for i, d := range denials {
		refused[i] = d.String() // escaped: the program chose the path
	}
	what := strings.Join(refused, ", ")
	if more > 0 {
		what += fmt.Sprintf(" (and %d more)", more)
	}
	return fmt.Sprintf("basis: the sandbox (%s%s) refused %s: %s", mode, network, what, strings.Join(advice, "; "))
}

// profileOf is the sandbox as an approval records it (a tool's
// definition): the description of a call, with only the directories the
// policy adds in its write list — not the workspace, the working
// directory, the cache or the temporary directory every call gets — and
// only the paths the policy protects, as written — not the .git, .basis
// and .mcp.json every call's are — so an approval holds in every workspace
// with the same sandbox.
func profileOf(p sandbox.Policy, d sandbox.Description) sandbox.Description {
	d.Protected = nil
	switch d.Mode {
	case sandbox.Off:
		return d
	case sandbox.WorkspaceWrite:
		if len(p.Protect) > 0 {
			d.Protected = slices.Sorted(slices.Values(p.Protect))
			d.Protected = slices.Compact(d.Protected)
		}
		d.Write = []string{}
		for _, w := range p.Write {
			if r, err := filepath.EvalSymlinks(w); err == nil {
				w = r
			}
			d.Write = append(d.Write, filepath.Clean(w))
		}
		slices.Sort(d.Write)
		d.Write = slices.Compact(d.Write)
	default:
		d.Write = []string{}
	}
	return d
}

// startUnconfined is the Confine hook of a program the operator runs
// without a sandbox: it leaves the start to subprocess.Run, which then
// has the program die with basis (a start of the hook's own would have
// to say that itself).
func startUnconfined(*exec.Cmd) (start func() error, release func(), err error) {
	return nil, nil, nil
}

// effectiveMode is the mode a policy enforces: its zero value is the
// default, workspace-write.
func effectiveMode(m sandbox.Mode) sandbox.Mode {
	if m == "" {
		return sandbox.WorkspaceWrite
	}
	return m
}

// SandboxPolicy is the policy the programs of tool get here: the
// operator's, tightened by the workspace's. network is whether the tool
// declared it needs the network. A stdio MCP server's program goes by
// "mcp__<server>", with the network.
func (w *Workspace) SandboxPolicy(tool string, network bool) sandbox.Policy {
	return w.sandboxes.policy(tool, network)
}

// Sandbox is the confinement hook of every binding (declared, spawn, a
// stdio MCP server): each program is confined as [Workspace.SandboxPolicy]
// says. A machine that cannot confine it as its policy asks refuses it,
// with the sandbox's message (which names the opt-out), and so does a
// workspace whose sandbox configs have problems: nothing runs unconfined.
func (w *Workspace) Sandbox() subprocess.Confiner {
	return func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
		if w.sandboxErr != nil {
			return nil, fmt.Errorf("the sandbox configs have problems, so no program runs: %w", w.sandboxErr)
		}
		return w.sandboxes.confine(sandboxKey{tool: tool, network: network}, dir)
	}
}

// ReadOnlySandbox is the confinement hook of declared tools whose
// manifest entry says "sandbox": "read-only" (declared.Options
// .ReadOnlySandbox): read-only, reads limited to the workspace, system
// directories and the program, no network, within what the operator and
// the workspace allow the tool. Its confinements say ReadOnly, so the
// calls pass the gate unasked, unless the operator turned the sandbox
// off: the program then runs unconfined, as any other, and is asked
// about. The network a tool declares is ignored: read-only has none.
func (w *Workspace) ReadOnlySandbox() subprocess.Confiner {
	return func(tool string, _ bool, dir string) (*subprocess.Confinement, error) {
		if w.sandboxErr != nil {
			return nil, fmt.Errorf("the sandbox configs have problems, so no program runs: %w", w.sandboxErr)
		}
		return w.sandboxes.confine(sandboxKey{tool: tool, readOnly: true}, dir)
	}
}

// ReadOnlyPolicy is the policy the program of tool gets when its manifest
// entry says "sandbox": "read-only", and whether it is read-only here
// (false where the operator turned the sandbox off).
func (w *Workspace) ReadOnlyPolicy(tool string) (p sandbox.Policy, readOnly bool) {
	return w.sandboxes.readOnlyPolicy(tool)
}

// SandboxProblems is what this machine cannot do of the sandbox: the
// tools, given by name with their policy (from [Workspace.SandboxPolicy]),
// whose programs it cannot confine as asked, one problem for each reason,
// naming the tools and how the operator opts out (basis check lists them).
func (w *Workspace) SandboxProblems(policies map[string]sandbox.Policy) error {
	byReason := map[string][]string{}
	var reasons []string
	for name, p := range policies {
		if effectiveMode(p.Mode) == sandbox.Off {
			continue
		}
		if err := checkSandbox(p); err != nil {
			if _, seen := byReason[err.Error()]; !seen {
				reasons = append(reasons, err.Error())
			}
			byReason[err.Error()] = append(byReason[err.Error()], name)
		}
	}
	slices.Sort(reasons)
	var errs []error
	for _, reason := range reasons {
		names := byReason[reason]
		slices.Sort(names)
		errs = append(errs, fmt.Errorf("%s cannot run here: %s", strings.Join(names, ", "), reason))
	}
	return errors.Join(errs...)
}
