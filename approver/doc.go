//go:build unix

// Package approver decides whether a call may run: remembered rules, an
// Approver seam, and a gate that fails closed.
//
// Every consequential call reaches a [Gate] before it runs. The gate judges
// the call's [contract.Preview] — above all its Subject, the canonical JSON
// of the act — never just the tool's name:
//
//  1. A call whose preview SideEffect is none passes unasked: asking about
//     reads trains people to approve without reading.
//  2. Rules answer next: the operator's, the workspace's, and those
//     remembered from for-session answers.
//  3. Otherwise the [Approver] is asked — [AllowAll], [DenyAll], a
//     [BySideEffect] policy, a person at a terminal (the module github.com/basis-go/basis/approver/terminal), a [Hook] program, or
//     any [ApproverFunc] — under an optional timeout, with panics
//     recovered.
//
// Anything that is not an answer is a denial whose reason says which: an
// error, a panic, a missed deadline, a cancelled context, a zero
// [Decision], no approver at all. Every [Verdict] records its [Source].
//
// # Rules
//
// A [Rule] names one tool, the source it is bound to, and a decision —
// allow, ask or deny — narrowed by at most one of the kinds below. An ask
// rule sends the call to the approver even when an allow rule also
// matches ("allow git *, but always ask for git push *").
//
// The source is where the tool was declared: the absolute path of its
// manifest or MCP config, [BuiltinSource] for spawn, or [AnySource] for
// any. A rule matches only calls whose [Request.Source] is its own, so an
// approval given in one repository never runs another repository's tool of
// the same name. An allow rule without a source (a file written before
// sources existed) matches nothing, and [LoadRules] warns about it; a deny
// or ask rule without one matches every source, since it only takes power
// away. Workspace rules need no source: they speak only for their
// workspace.
//
// An allow rule also records the definition of the tool it approved
// ([Rule.Definition], from [contract.Definer] through
// [Request.Definition]) and matches only while the tool is still that,
// but for a tighter sandbox ([CompareDefinitions]); a changed tool is
// asked about again, with what changed ([StaleRule]). One that records
// none matches only tools that have none.
//
//   - Pattern: a glob over the Subject JSON. '*' matches any run of
//     characters, slashes and quotes included; '?' matches one character;
//     everything else, JSON punctuation too, matches itself. There is no
//     escape character. The whole Subject must match.
//   - Command: an argv pattern matched against each simple command in the
//     Subject's top-level "commands" list (the spawn tool puts one there
//     when it can analyse a command line). Word for word, each word a list
//     of alternatives ([CommandWord]); '*' inside a word matches any run of
//     characters within that word; a last word that is "*" alone matches
//     any number of further words, none included. So go test * matches
//     "go test", "go test ./..." and "go test -run X ./...", go test
//     matches only "go test", and git {push,fetch} * matches both. Every
//     command must be allowed by some rule for the call to be allowed; one
//     command matched by a deny rule denies it, one matched by an ask rule
//     asks. A "commands" list that is null, absent or empty matches no
//     command rule.
//   - Subject (session rules only): exactly this Subject, byte for byte.
//
// A rule with none of them is a bare tool rule: every call of the tool.
// A rule may carry examples (Match, NotMatch) that are checked whenever it
// is loaded or validated ([Rule.CheckExamples]).
//
// # Precedence
//
// For a call of tool T from source S, only T's rules bound to S (or
// matching every source) are consulted. The system layer is judged first,
// on its own, by the table below: its deny stands whatever else matches,
// and its ask stands unless another rule denies. Otherwise all rules —
// system allows, the operator's, the workspace's and the session's — are
// judged together:
//
//	level 1: subject, pattern and command rules that match
//	         deny beats ask beats allow
//	level 2: bare rules for T, only when nothing at level 1 matched
//	         deny beats ask beats allow
//	then:    ask, or no rule at all: the approver is asked
//
// Among several matching rules with the same decision, the first in rule
// order gives the reason: the gate's fixed rules in the order given (the
// system's, the operator's, then the workspace's), then session rules in
// the order they were made. Session rules take part in the same table as
// any other rule.
//
// # Files
//
// The operator's rules live in <config dir>/rules.json ([RulesFile] adds
// and removes them safely against other processes, and saves "always"
// answers through [GateOptions.Save]); a workspace may ship
// .basis/rules.json with deny and ask rules only, so a repository can
// never pre-approve its own tools; an administrator may set
// /etc/basis/rules.json. [LoadRules] reads each of them by its [Scope],
// with configfile.Read: no FIFO, device or oversized file is ever read. An
// operator file others can write may not allow anything, and a system file
// others can write is refused.
//
// [Gate.Explain] says what the rules make of a call without asking anyone,
// and which rules would allow it.
package approver
