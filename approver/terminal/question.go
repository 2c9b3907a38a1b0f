//go:build unix

package terminal

import (
	"fmt"
	"strings"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract/display"
)

// question is what the terminal shows for req: the tool, the side effect,
// the preview's Summary and Subject, what changed in the tool since a rule
// allowed it (req.Stale), the request's Warnings, any proposed rules, and
// the keys it takes. Every piece is made printable, so a subject cannot
// move the cursor or rewrite what the person reads. Lines end in "\r\n",
// since a terminal in raw mode does no output processing.
func question(req approver.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\r\nbasis: tool %s wants to act (side effect %s)\r\n", display.Escape(req.Tool), req.Preview.SideEffect)
	if req.Preview.Summary != "" {
		fmt.Fprintf(&b, "  %s\r\n", display.Escape(req.Preview.Summary))
	}
	if len(req.Preview.Subject) > 0 {
		fmt.Fprintf(&b, "  subject: %s\r\n", display.Escape(string(req.Preview.Subject)))
	}
	for _, st := range req.Stale {
		fmt.Fprintf(&b, "  changed since %s allowed it: %s\r\n", display.Escape(origin(&st.Rule)), display.Escape(strings.Join(st.Changes, "; ")))
	}
	for _, w := range req.Warnings {
		fmt.Fprintf(&b, "  warning: %s\r\n", display.Escape(w))
	}
	if len(req.Proposed) > 0 {
		fmt.Fprintf(&b, "  always would allow: %s\r\n", display.Escape(proposedText(req.Proposed)))
		b.WriteString("  [y] allow once  [a] always (the rule above)  [t] always this tool  [n] deny  [d] deny always: ")
		return b.String()
	}
	b.WriteString("  [y] allow once  [a] always this call  [t] always this tool  [n] deny  [d] deny always: ")
	return b.String()
}

// answer maps a key pressed at the question to an answer and the words
// echoed after it (see [Terminal] for the keys). With saveTo set, the
// "always" answers carry Persist and the echo says where they are kept;
// otherwise they hold for the session.
func answer(key byte, req approver.Request, saveTo string) (approver.Answer, string) {
	tool := req.Tool
	kept, persist := "for the rest of this session", false
	if saveTo != "" {
		kept, persist = "from now on (saved to "+display.Escape(saveTo)+")", true
	}
	switch key {
	case 'y', 'Y':
		return approver.Answer{Decision: approver.Allow, Reason: "allowed once at the terminal"}, "y: allowed once"
	case 'a', 'A':
		if len(req.Proposed) > 0 {
			return approver.Answer{Decision: approver.AllowSession, Persist: persist, Reason: "allowed at the terminal", Remember: &approver.Remember{Proposed: true}},
				"a: allowed; commands matching " + display.Escape(proposedText(req.Proposed)) + " will not be asked about again " + kept
		}
		return approver.Answer{Decision: approver.AllowSession, Persist: persist, Reason: "allowed at the terminal"},
			"a: allowed; this exact call will not be asked about again " + kept
	case 't', 'T':
		return approver.Answer{Decision: approver.AllowSession, Persist: persist, Reason: fmt.Sprintf("every call of %s allowed at the terminal", tool), Remember: &approver.Remember{Tool: true}},
			"t: allowed; calls of this tool will not be asked about again " + kept
	case 'n', 'N':
		return approver.Answer{Decision: approver.Deny, Reason: fmt.Sprintf("tool %s denied by the operator at the terminal", tool)}, "n: denied"
	case 'd', 'D':
		return approver.Answer{Decision: approver.DenySession, Persist: persist, Reason: fmt.Sprintf("tool %s denied by the operator at the terminal; do not ask for this call again", tool)},
			"d: denied; this exact call will be denied without asking " + kept
	}
	return approver.Answer{Decision: approver.Deny, Reason: fmt.Sprintf("tool %s denied: the key pressed at the terminal was not an answer", tool)}, "denied (not one of y a t n d)"
}

// proposedText lists proposed rules' commands: "go test *; tail *".
func proposedText(rules []approver.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = approver.FormatCommand(r.Command)
	}
	return strings.Join(parts, "; ")
}

// origin names the rule a person approved the tool by: "operator rule 1 in
// FILE", or its scope alone for a rule from no file.
func origin(r *approver.Rule) string {
	scope := r.Scope
	if scope == "" {
		scope = approver.ScopeOperator
	}
	if r.File != "" && r.Number > 0 {
		return fmt.Sprintf("%s rule %d in %s", scope, r.Number, r.File)
	}
	return fmt.Sprintf("a %s rule", scope)
}
