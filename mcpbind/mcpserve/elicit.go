package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/contract/display"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors [Ask] returns when nobody can be asked: [ElicitApprover] denies
// with a reason that says how to allow the call for good then, since
// asking again would not help. Every other error of Ask (no answer in
// time, the call cancelled) is a denial too.
var (
	// errNoElicitation: the client did not declare that it supports form
	// elicitation, so its user cannot be asked.
	errNoElicitation = errors.New("the MCP client cannot ask its user (it did not declare elicitation support)")
	// errNotServing: the context does not come from a call a [Server] is
	// serving, so there is no client to ask.
	errNotServing = errors.New("no MCP client to ask: the call is not being served by basis serve")
)

// errNoAnswer: the question went to the client and no answer came back
// in time.
var errNoAnswer = errors.New("the MCP client's user gave no answer")

// questionID names the one input request a call sends at a time.
const questionID = "basis_approval"

// Question is what the client's user is asked about one call: the preview
// the gate judged, and the tool it is for.
type Question struct {
	// Tool is the name the model called.
	Tool string
	// Source is where the tool came from (a manifest path, an MCP config,
	// "builtin"), shown so the user knows whose tool it is.
	Source string
	// SideEffect is the preview's: what the call may touch.
	SideEffect contract.SideEffect
	// Summary is the preview's one human line.
	Summary string
	// Subject is the preview's canonical JSON of exactly what runs; it
	// never carries a secret, so it is shown whole. Like every text of the
	// question it is shown through display.Escape: nothing in it can
	// change how the form reads.
	Subject json.RawMessage
	// Always, when set, says what "always" would allow from now on, such
	// as the command rule proposed for a spawn call ("go test *"); empty
	// means this exact call.
	Always string
	// Changed, when set, says what changed in the tool since a rule
	// allowed it ("command was …, is now …"): why a call that ran unasked
	// before is asked about.
	Changed string
	// Warnings are what the user should know beyond the preview, such as
	// a repository git config naming programs git runs; each is shown on
	// a line of its own.
	Warnings []string
}

// Choice is the user's answer, spelt as the form's choices are. Anything
// but [ChoiceAllowOnce] and [ChoiceAllowAlways], the zero value included,
// denies: nothing that is not an explicit allow is read as consent.
type Choice string

const (
	// ChoiceDeny: do not run the call.
	ChoiceDeny Choice = "deny"
	// ChoiceAllowOnce: run this call.
	ChoiceAllowOnce Choice = "allow_once"
	// ChoiceAllowAlways: run this call, and calls of this tool with the
	// same subject from now on in this workspace. The approver remembers
	// it as a rule bound to the tool's source.
	ChoiceAllowAlways Choice = "allow_always"
)

// Reply is the client's answer to a [Question].
type Reply struct {
	// Choice is what the user chose; anything but an explicit allow is
	// ChoiceDeny.
	Choice Choice
	// Said is what happened, in words for a denial's reason: "the user
	// chose deny", "the user declined the question", …
	Said string
}

type answer struct {
	reply Reply
	raw   mcp.InputResponse    // the client's answer as it came, for a forwarded request
	raws  mcp.InputResponseMap // the answers to a passed-through round's keys
	err   error
}

// question is one input request on its way to the client and back:
// basis's own approval form (key questionID) or a request an upstream
// server made ([Forward], key forwardID).
type question struct {
	key    string
	params mcp.InputRequest
	// many, server and keys are a server's round passed through
	// (inputrequired.go): its requests under its own keys, in place of
	// key and params.
	many   mcp.InputRequestMap
	server string
	keys   []string
	once   sync.Once
	reply  chan answer // buffered: the first answer wins, later ones are dropped
	timer  *time.Timer // the answer timeout; set and stopped under the call's mu
}

func (q *question) answer(a answer) {
	q.once.Do(func() { q.reply <- a })
}

// Ask asks the user of the MCP client that made the call in ctx whether
// the call may run, through a form elicitation sent as an input request
// (the SDK's multi round-trip pattern): on protocol 2026-07-28 the call's
// result carries the question and the client retries with the answer; on
// older protocols the SDK sends elicitation/create and retries for us.
// Either way Ask blocks until the answer comes, ctx is done, or the
// server's answer timeout passes. Meanwhile the call lets its client's
// slot go, so the client's other calls of tools that are not Parallel
// run, and takes it again before Ask returns.
//
// An approver in the host ([ElicitApprover]) calls Ask from inside
// [Roster.Call]. An error means nobody answered: the client cannot be
// asked, ctx is not a served call's, no answer came in time or ctx
// ended; each means deny.
func Ask(ctx context.Context, q Question) (Reply, error) {
	pc, _ := ctx.Value(pendingKey{}).(*pendingCall)
	if pc == nil {
		d, _ := ctx.Value(directKey{}).(*direct)
		if d == nil {
			return Reply{}, errNotServing
		}
		if newProtocol(d.session) || !canElicit(sessionCaps(d.session)) {
			return Reply{}, errNoElicitation
		}
		res, err := d.session.Elicit(d.ctx, elicitParams(q))
		if err != nil {
			return Reply{}, fmt.Errorf("asking the MCP client's user: %w", err)
		}
		return replyFrom(res), nil
	}
	pc.askMu.Lock()
	defer pc.askMu.Unlock()
	if a := pc.attached(); a == nil || !a.canElicit() {
		return Reply{}, errNoElicitation
	}
	// Nothing of the call has run while its user decides, so the
	// client's other calls may: a user who never answers holds up none
	// of them. The call takes its slot again before it runs.
	pc.slot.away()
	a, err := pc.ask(ctx, &question{key: questionID, params: elicitParams(q), reply: make(chan answer, 1)})
	if berr := pc.slot.back(); berr != nil && err == nil {
		return Reply{}, fmt.Errorf("the call was cancelled while it waited for another call of its client to finish: %w", berr)
	}
	return a.reply, err
}

// ask hands one question to the request waiting on the call, which
// sends it to the client as an input request, and waits for the answer.
// The caller holds askMu.
func (pc *pendingCall) ask(ctx context.Context, qu *question) (answer, error) {
	select {
	case pc.asks <- qu:
	case <-ctx.Done():
		return answer{}, fmt.Errorf("asking the MCP client's user: %w", context.Cause(ctx))
	}
	select {
	case a := <-qu.reply:
		return a, a.err
	case <-ctx.Done():
		qu.answer(answer{err: ctx.Err()})
		return answer{}, fmt.Errorf("waiting for the MCP client's user: %w", context.Cause(ctx))
	}
}

// direct is a request other than a tool call (a resource read, a prompt
// get) that the server is serving: on protocols before 2026-07-28 a
// question during it goes to its client as a request of its own.
type direct struct {
	ctx     context.Context
	session *mcp.ServerSession
}

type directKey struct{}

// sessionCaps is what the session's client declared at initialize; nil
// without one (a sessionless request carries its own).
func sessionCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ss == nil {
		return nil
	}
	if p := ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

// canElicit reports whether the client declared form elicitation (or
// elicitation with no mode, which means form): caps are the request's
// client capabilities, from its _meta on protocol 2026-07-28 and from the
// session's initialize before.
func canElicit(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// elicitParams renders the form: the preview in words, and one choice.
// enum with enumNames is the form every protocol version with elicitation
// understands.
func elicitParams(q Question) *mcp.ElicitParams {
	var b strings.Builder
	fmt.Fprintf(&b, "basis: the tool %s wants to act (side effect: %s).\n", display.Escape(q.Tool), q.SideEffect)
	if q.Summary != "" {
		fmt.Fprintf(&b, "%s\n", display.Escape(q.Summary))
	}
	if len(q.Subject) > 0 {
		fmt.Fprintf(&b, "Exactly what runs: %s\n", display.Escape(string(q.Subject)))
	}
	if q.Source != "" {
		fmt.Fprintf(&b, "The tool comes from: %s\n", display.Escape(q.Source))
	}
	if q.Changed != "" {
		fmt.Fprintf(&b, "It changed since it was allowed: %s\n", display.Escape(q.Changed))
	}
	for _, w := range q.Warnings {
		fmt.Fprintf(&b, "Warning: %s\n", display.Escape(w))
	}
	always, alwaysSays := "Always allow this (in this workspace)", "allow calls with this same subject from now on in this workspace"
	if q.Always != "" {
		fmt.Fprintf(&b, "Always would allow: %s\n", display.Escape(q.Always))
		always, alwaysSays = "Always allow: "+display.Escape(q.Always), "allow what the rule shown covers from now on"
	}
	b.WriteString("Allow it?")
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type":        "string",
				"title":       "Decision",
				"description": "Allow this call once, " + alwaysSays + ", or deny it.",
				"enum":        []any{string(ChoiceAllowOnce), string(ChoiceAllowAlways), string(ChoiceDeny)},
				"enumNames":   []any{"Allow once", always, "Deny"},
			},
		},
		"required": []any{"decision"},
	}
	return &mcp.ElicitParams{Mode: "form", Message: b.String(), RequestedSchema: schema}
}

// replyFrom reads the client's answer. Anything but an accepted form with
// one of the three choices is a denial.
func replyFrom(res *mcp.ElicitResult) Reply {
	if res == nil {
		return Reply{Choice: ChoiceDeny, Said: "no answer to the question came back with the retry"}
	}
	switch res.Action {
	case "decline":
		return Reply{Choice: ChoiceDeny, Said: "the user declined the question"}
	case "cancel":
		return Reply{Choice: ChoiceDeny, Said: "the user dismissed the question without choosing"}
	case "accept":
	default:
		return Reply{Choice: ChoiceDeny, Said: "the client's answer was not accept, decline or cancel"}
	}
	word, _ := res.Content["decision"].(string)
	switch Choice(word) {
	case ChoiceAllowOnce:
		return Reply{Choice: ChoiceAllowOnce, Said: "the user allowed it once"}
	case ChoiceAllowAlways:
		return Reply{Choice: ChoiceAllowAlways, Said: "the user allowed it always"}
	case ChoiceDeny:
		return Reply{Choice: ChoiceDeny, Said: "the user chose deny"}
	}
	return Reply{Choice: ChoiceDeny, Said: "the user's answer was not one of allow_once, allow_always, deny"}
}
