package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/basis-go/basis/approver"
)

// ElicitApprover is the approver of a host that serves its roster: it
// asks the user of the MCP client that made the call ([Ask]) whether the
// call may run. Allow once allows this call; always allows it for the
// session and asks the gate to save it as an operator rule (covering the
// command rules the gate proposed, when it proposed some); anything else
// denies. A client that cannot be asked gets a denial whose reason ends
// with allowHint(req): how to allow the call for good, such as a
// command that adds a rule (nil: no hint).
func ElicitApprover(allowHint func(approver.Request) string) approver.Approver {
	return approver.ApproverFunc(func(ctx context.Context, req approver.Request) (approver.Answer, error) {
		reply, err := Ask(ctx, Question{
			Tool:       req.Tool,
			Source:     req.Source,
			SideEffect: req.Preview.SideEffect,
			Summary:    req.Preview.Summary,
			Subject:    req.Preview.Subject,
			Always:     proposedCommands(req.Proposed),
			Changed:    staleText(req.Stale),
			Warnings:   req.Warnings,
		})
		switch {
		case errors.Is(err, errNoElicitation), errors.Is(err, errNotServing):
			reason := fmt.Sprintf("%s was not run: %v, and no rule allows the call", req.Tool, err)
			if allowHint != nil {
				if hint := allowHint(req); hint != "" {
					reason += "; allow it for good with: " + hint
				}
			}
			return approver.Answer{Decision: approver.Deny, Reason: reason}, nil
		case err != nil:
			return approver.Answer{Decision: approver.Deny, Reason: fmt.Sprintf("%s was not run: %v", req.Tool, err)}, nil
		}
		switch reply.Choice {
		case ChoiceAllowOnce:
			return approver.Answer{Decision: approver.Allow, Reason: "allowed once by the MCP client's user"}, nil
		case ChoiceAllowAlways:
			answer := approver.Answer{Decision: approver.AllowSession, Persist: true, Reason: "always allowed by the MCP client's user"}
			if len(req.Proposed) > 0 {
				answer.Remember = &approver.Remember{Proposed: true}
			}
			return answer, nil
		}
		return approver.Answer{Decision: approver.Deny, Reason: fmt.Sprintf("tool %s denied: %s", req.Tool, reply.Said)}, nil
	})
}

// staleText says what changed in the tool since a rule allowed it: the
// first stale rule's changes, or "".
func staleText(stale []approver.StaleRule) string {
	if len(stale) == 0 {
		return ""
	}
	return strings.Join(stale[0].Changes, "; ")
}

// proposedCommands is what "always" would allow for a spawn call: the
// command rules the gate proposed ("go test *; tail *"), or "" for this
// exact call.
func proposedCommands(rules []approver.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = approver.FormatCommand(r.Command)
	}
	return strings.Join(parts, "; ")
}
