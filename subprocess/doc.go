//go:build unix

// Package subprocess runs somebody else's program safely: argv only, an
// exact environment, a payload on stdin, a deadline, bounded output, and
// nothing left behind.
//
// basis runs programs in three places — declared tools, spawn commands and
// hook approvers — and each needs the same guarantees, so they are written
// once, here:
//
//   - No shell. [Cmd.Argv] is the program and its arguments; a caller that
//     wants a shell passes "/bin/sh", "-c" itself.
//   - Program resolution: a path with a directory part is relative to
//     [Cmd.Root]; a bare name is looked up in the PATH of the environment the
//     child gets ([Cmd.Env]), falling back to basis's own PATH when that
//     environment has none.
//   - The environment is exactly [Cmd.Env]. A nil Env is an empty
//     environment, not basis's own: the caller states what the child sees.
//     Later entries win for a repeated name ([MergeEnv]).
//   - The payload is written to stdin while output is read, so a large
//     payload cannot deadlock against a large answer, and a child that never
//     reads its stdin is not an error by itself.
//   - The program starts in a session of its own, with no controlling
//     terminal: it cannot open /dev/tty, so it can neither read the
//     operator's terminal nor type into it (TIOCSTI). On Linux it is
//     killed when this process dies, even by SIGKILL (a [Cmd.Confine] hook
//     that starts the program itself decides that).
//   - A deadline covers starting, running and draining output. When it
//     passes, or the context is cancelled, the whole process group gets
//     SIGTERM, then SIGKILL after [Cmd.Grace]. After every run the group is
//     killed, so background grandchildren never outlive the call. A
//     program that leaves the group (setsid, setpgid, a double fork)
//     escapes that kill, unless the host called [ReapOrphans] (Linux):
//     then such orphans come to this process, and every run ends by
//     killing them. A host that starts programs of its own in a session of
//     their own starts them through [Track], so the sweep spares them.
//   - stdout and stderr are captured separately up to a limit each. Past the
//     stdout limit the pipe is closed, as "| head -c" would, so a program
//     that prints forever ends with SIGPIPE instead of running on unread;
//     past the stderr limit the rest is read and discarded. Memory stays
//     bounded either way. Everything the program wrote before it exited
//     arrives; output still held open by a writer that escaped the run is
//     read for a short while, and then counts as truncated.
//   - [Cmd.Confine] lets a sandbox confine the program without this
//     package knowing about it: the hook may rewrite the command and start
//     it, and a hook that refuses means the program does not run.
//     [Confinement] carries such a hook with the description a preview
//     shows of it, from a host's sandbox to the tools that start programs.
//   - The [Outcome] says exactly one thing: exited with a code, killed by a
//     signal, timed out, cancelled, or could not start (with the operating
//     system's reason).
//
// Errors and outcomes never quote the program path, arguments or
// environment values: the caller knows what it passed, and those may carry
// credentials.
package subprocess
