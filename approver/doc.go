//go:build unix

// Package approver decides whether a call may run: remembered rules, an
// [Approver] seam, and a [Gate] that fails closed.
//
// The gate judges a call's [contract.Preview] — above all its Subject, the
// canonical JSON of the act — never just the tool's name. A call that only
// reads passes unasked; then the rules answer (the system's, the
// operator's, the workspace's and the session's, each bound to the source
// that declared the tool and to the definition it approved); otherwise the
// approver is asked. Anything that is not an answer — an error, a panic, a
// missed deadline — is a denial whose reason says which.
//
// Rules files are read with [LoadRules] and changed with [RulesFile]. How
// rules match and which one wins is in the rules guide, docs/rules.md:
// https://github.com/basis-go/basis/blob/main/docs/rules.md
package approver
