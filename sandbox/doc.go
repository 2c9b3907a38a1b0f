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
// On Linux the policy is enforced with Landlock (reads everywhere, writes
// only beneath the workspace root, the tool's working directory, a
// per-call TMPDIR that the sandbox creates and removes, a cache of the
// sandbox's own for the workspace and the paths the policy names) and,
// without the network, a network namespace of the program's own (loopback
// only) — or, where no namespace can be created, Landlock's TCP rules —
// plus a seccomp filter that refuses Unix sockets. Inside the writable
// directories, what programs outside the sandbox execute (.git, .basis,
// .mcp.json, [Policy.Protect]) is mounted read-only in a mount namespace
// of the call's own. Capabilities that reach past the sandbox
// (CAP_SYS_ADMIN and the like) are dropped, so a program started by root
// cannot walk back into the host's namespaces nor undo its mounts.
//
// Landlock restricts the calling thread and what it executes, and os/exec
// has no hook between fork and exec, so [Sandbox.Prepare] returns the
// function that starts the program. Where this process may enter a network
// namespace itself (root, or no namespace needed), that function confines
// a fresh, locked OS thread and starts the program from it: a child
// inherits the Landlock domain, capabilities and network namespace of the
// thread that forks it. An unprivileged process needs a user namespace for
// the network namespace, which must be made when the child is cloned; then
// Prepare rewrites the command into a re-execution of the running binary
// (/proc/self/exe) that [Main], called first thing in main(), recognises:
// it restricts itself and executes the program. A host that embeds basis
// gets a sandboxed run by adding that one call; no second binary is needed.
//
// Where the sandbox cannot be enforced — no Landlock, not Linux, no way to
// cut the network — Prepare fails with an [*UnavailableError] that tells
// the operator how to opt out. It never runs a program unconfined by
// itself.
//
// [Sandbox.Describe] returns what a preview shows and rules match: a
// [Description] with stable JSON, and [Description.Summary] for one human
// line.
package sandbox
