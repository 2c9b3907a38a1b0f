//go:build unix

// Package sandbox confines the programs basis starts — declared tools and
// spawn commands — so that an approved call cannot write outside its
// workspace or reach the network unless its tool declared it.
//
// A [Policy] says what a program may do: a [Mode] (workspace-write, the
// default; read-only; off) and whether it may use the network. The
// operator's sandbox.json ([ParseConfig]) sets the default and per-tool
// overrides; a workspace's .basis/sandbox.json ([ParseWorkspaceConfig],
// [Config.Tighten], [Tighten]) may only make it stricter.
//
// On Linux the policy is enforced with Landlock (reads everywhere outside /dev
// and, in /dev, of the ordinary devices only — no terminal, console, input
// device or disk —; writes
// only beneath the workspace root, the tool's working directory, a
// per-call TMPDIR that the sandbox creates and removes, a cache of the
// sandbox's own for the workspace and the paths the policy names; no ioctl
// on terminals, so no TIOCSTI into the operator's terminal, and no writes
// to pseudo-terminals by path) and, without the network, a network
// namespace of the program's own (loopback only) — or, where no namespace
// can be created, Landlock's TCP rules — plus a seccomp filter that
// refuses Unix sockets. Inside the writable directories, what programs
// outside the sandbox execute (.git, .basis, .mcp.json, [Policy.Protect])
// is mounted read-only in a mount namespace of the call's own.
// Capabilities that reach past the sandbox (CAP_SYS_ADMIN and the like)
// are dropped, so a program started by root cannot walk back into the
// host's namespaces nor undo its mounts.
//
// The program is the first process of a PID namespace of its own: when it
// exits, the kernel kills everything it left behind, whichever session or
// process group that moved to. Its parent-death signal is SIGKILL, so it
// dies with basis, even when basis is killed; the release function kills
// it if it still runs. As a namespace's first process it ignores signals
// it has no handler for, SIGKILL excepted (a SIGTERM to its group reaches
// the rest of the group; a write to a closed pipe fails with EPIPE instead
// of killing it). A hostile program can clear its own parent-death signal;
// it then outlives a basis killed with SIGKILL, still confined.
//
// Landlock restricts the calling thread and what it executes, and os/exec
// has no hook between fork and exec, so [Sandbox.Prepare] returns the
// function that starts the program. Where this process may create
// namespaces itself (root), that function confines a fresh, locked OS
// thread and starts the program from it: a child inherits the Landlock
// domain, capabilities and network namespace of the thread that forks it,
// and the thread lives until release, since the parent-death signal fires
// when the thread that cloned the child ends. An unprivileged process
// needs a user namespace for the others, which must be made when the child
// is cloned; then Prepare rewrites the command into a re-execution of the
// running binary (/proc/self/exe) that [Main], called first thing in
// main(), recognises: cloned into new user, PID (and network) namespaces
// with nothing mapped — basis is not dumpable, so it may not write its
// child's uid_map — it maps its own uid and gid once its exec made it
// dumpable, brings loopback up, makes its mount namespace, drops its
// capabilities, restricts itself and executes the program. A host that embeds basis gets a sandboxed run
// by adding that one call; no second binary is needed.
//
// Where the sandbox cannot be enforced — no Landlock, not Linux, no way to
// cut the network — Prepare fails with an [*UnavailableError] that tells
// the operator how to opt out. It never runs a program unconfined by
// itself.
//
// A [Watch] ([Sandbox.Watch]) is Prepare for one call that also reports
// what Landlock refused its program ([Denial]), read from the kernel's
// audit records where the operator turned the audit on (Linux 6.15 or
// later) and this process may read them; a refusal line names the path
// then, not just the settings.
//
// [Sandbox.Describe] returns what a preview shows and rules match: a
// [Description] with stable JSON, and [Description.Summary] for one human
// line.
package sandbox
