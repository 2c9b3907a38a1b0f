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
	mu        sync.Mutex
	made      map[sandboxKey]*sandbox.Sandbox
}

type sandboxKey struct {
	tool    string
	network bool
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

// sandbox returns the tool's Sandbox, made once: a Sandbox may be shared
// by concurrent calls.
func (s *sandboxes) sandbox(tool string, network bool) (*sandbox.Sandbox, error) {
	key := sandboxKey{tool, network}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb, ok := s.made[key]; ok {
		return sb, nil
	}
	sb, err := sandbox.New(s.policy(tool, network), s.root)
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
func (s *sandboxes) confine(tool string, network bool, dir string) (*subprocess.Confinement, error) {
	if err := checkSandbox(s.policy(tool, network)); err != nil {
		return nil, err
	}
	sb, err := s.sandbox(tool, network)
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
	confine := sb.Prepare
	if effectiveMode(s.policy(tool, network).Mode) == sandbox.Off {
		confine = startUnconfined
	}
	return &subprocess.Confinement{Confine: confine, Subject: subject, Summary: d.Summary(), Profile: profile}, nil
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
		return w.sandboxes.confine(tool, network, dir)
	}
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
