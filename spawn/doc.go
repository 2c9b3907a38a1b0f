//go:build unix

// Package spawn is basis's native tool: the model's one route to a shell
// command and to a subagent.
//
// The tool takes one string, "input", and parses it once, at the edge
// ([Parse]), into an [Input]: "!cmd" runs cmd with /bin/sh -c in the
// workspace root, "!@name cmd" runs it on a target a host registered
// ([Options.Targets]), "!!text" is a task whose text starts with "!", and any
// other text is a task for a subagent ([Delegator]). Nothing downstream of
// the parse reads the string again.
//
// Before anything runs, [Tool.AuthorizationPreview] states the act: the
// body, where it runs, and — for a command — the list of simple commands
// it is made of ([AnalyzeCommands]), or null, with the reason under
// "unanalysable", when the body cannot be analysed statically — including
// every form dash and bash could read differently, since /bin/sh is one or
// the other. That list is what lets a rule allow "go test ./..." without
// allowing "go test ./... && curl x | sh". Command bodies are bounded
// ([MaxBodyBytes], [MaxBodyNesting]) before any parser sees them.
//
// A local command runs with the ambient environment cleared except PATH,
// HOME, USER, LANG, LC_ALL, TERM, TMPDIR and SHELL, plus the runtime's own
// command environment: the command was written by a model, and credentials
// in basis's environment are not its to read. Its PATH keeps absolute
// entries only, so no program in the workspace is found by a bare name.
// With [Options.Sandbox] set, a local command runs confined by the host's
// sandbox, which its subject shows under "sandbox"; a sandbox that cannot
// confine it refuses the command (a [*Refusal]).
//
// Tasks are bounded in depth ([DefaultMaxDepth]); the depth travels in the
// context and, for a delegate that is a process ([CommandDelegator]), in
// [DepthEnv].
package spawn
