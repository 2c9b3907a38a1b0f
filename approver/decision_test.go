//go:build unix

package approver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
)

func TestDecisionAllowsAndForSession(t *testing.T) {
	tests := []struct {
		d                  approver.Decision
		allows, forSession bool
	}{
		{approver.Allow, true, false},
		{approver.Deny, false, false},
		{approver.AllowSession, true, true},
		{approver.DenySession, false, true},
		{"", false, false},
	}
	for _, tt := range tests {
		if tt.d.Allows() != tt.allows || tt.d.ForSession() != tt.forSession {
			t.Errorf("%q: Allows %v ForSession %v", tt.d, tt.d.Allows(), tt.d.ForSession())
		}
	}
}

// The words are the ones rules files, hook answers, audit records and
// --json output have always used.
func TestEnumerationText(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{approver.Allow, "allow"},
		{approver.Deny, "deny"},
		{approver.AllowSession, "allow_session"},
		{approver.DenySession, "deny_session"},
		{approver.ScopeOperator, "operator"},
		{approver.ScopeWorkspace, "workspace"},
		{approver.ScopeSession, "session"},
		{approver.ScopeSystem, "system"},
		{approver.Scope(""), "operator"},
		{approver.RuleDeny, "deny"},
		{approver.RuleAsk, "ask"},
		{approver.RuleAllow, "allow"},
		{approver.RuleDecision(""), "deny"},
		{approver.SourceReadOnly, "read_only"},
		{approver.SourceRule, "rule"},
		{approver.SourceApprover, "approver"},
		{approver.SourceFailClosed, "fail_closed"},
	}
	for _, tt := range tests {
		raw, err := json.Marshal(tt.v)
		if err != nil || string(raw) != `"`+tt.want+`"` {
			t.Errorf("Marshal(%#v) = %s, %v; want %q", tt.v, raw, err, tt.want)
		}
	}
}

// Nothing that is not a decision is ever read or written as one, and the
// error does not quote what it was given.
func TestEnumerationRefusesOtherWords(t *testing.T) {
	for _, v := range []any{approver.Decision(""), approver.Decision("yes"), approver.Source(""), approver.Scope("global"), approver.RuleDecision("maybe")} {
		if raw, err := json.Marshal(v); err == nil {
			t.Errorf("Marshal(%#v) = %s, want an error", v, raw)
		}
	}
	for _, word := range []string{"", "yes", "ALLOW", "allow ", "secret-word"} {
		targets := []interface{ UnmarshalText([]byte) error }{new(approver.Decision), new(approver.Scope), new(approver.RuleDecision), new(approver.Source)}
		for _, target := range targets {
			err := target.UnmarshalText([]byte(word))
			if err == nil || (word != "" && strings.Contains(err.Error(), word)) {
				t.Errorf("%T.UnmarshalText(%q) = %v, want an error not quoting the word", target, word, err)
			}
		}
	}
}
