//go:build unix

package approver_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/basis-go/basis/approver"
)

func TestDecisionText(t *testing.T) {
	tests := []struct {
		d                  approver.Decision
		text               string
		allows, forSession bool
	}{
		{approver.Allow, "allow", true, false},
		{approver.Deny, "deny", false, false},
		{approver.AllowSession, "allow_session", true, true},
		{approver.DenySession, "deny_session", false, true},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		if tt.d.Allows() != tt.allows || tt.d.ForSession() != tt.forSession {
			t.Errorf("%s: Allows %v ForSession %v", tt.text, tt.d.Allows(), tt.d.ForSession())
		}
		raw, err := json.Marshal(tt.d)
		if err != nil || string(raw) != `"`+tt.text+`"` {
			t.Errorf("Marshal(%s) = %s, %v", tt.text, raw, err)
		}
		var back approver.Decision
		if err := json.Unmarshal(raw, &back); err != nil || back != tt.d {
			t.Errorf("round trip of %s = %v, %v", tt.text, back, err)
		}
	}
}

func TestDecisionZeroIsNoDecision(t *testing.T) {
	var zero approver.Decision
	if zero.Allows() {
		t.Error("the zero Decision allows")
	}
	if _, err := json.Marshal(zero); !errors.Is(err, approver.ErrUnknownDecision) {
		t.Errorf("Marshal(zero) error = %v, want ErrUnknownDecision", err)
	}
	for _, word := range []string{"", "yes", "ALLOW", "allow ", "secret-word"} {
		_, err := approver.ParseDecision(word)
		if !errors.Is(err, approver.ErrUnknownDecision) || (word != "" && strings.Contains(err.Error(), word)) {
			t.Errorf("ParseDecision(%q) = %v, want ErrUnknownDecision not quoting the word", word, err)
		}
	}
}

func TestScopeAndSourceText(t *testing.T) {
	for s, want := range map[approver.Scope]string{approver.ScopeOperator: "operator", approver.ScopeWorkspace: "workspace", approver.ScopeSession: "session"} {
		raw, err := json.Marshal(s)
		var back approver.Scope
		if err != nil || string(raw) != `"`+want+`"` || json.Unmarshal(raw, &back) != nil || back != s {
			t.Errorf("scope %s: %s %v -> %v", want, raw, err, back)
		}
	}
	for s, want := range map[approver.Source]string{approver.SourceReadOnly: "read_only", approver.SourceRule: "rule", approver.SourceApprover: "approver", approver.SourceFailClosed: "fail_closed"} {
		raw, err := json.Marshal(s)
		var back approver.Source
		if err != nil || string(raw) != `"`+want+`"` || json.Unmarshal(raw, &back) != nil || back != s {
			t.Errorf("source %s: %s %v -> %v", want, raw, err, back)
		}
	}
	if _, err := json.Marshal(approver.Source(0)); !errors.Is(err, approver.ErrUnknownSource) {
		t.Errorf("Marshal(Source(0)) error = %v", err)
	}
	var s approver.Scope
	if err := s.UnmarshalText([]byte("global")); !errors.Is(err, approver.ErrUnknownScope) {
		t.Errorf("UnmarshalText(global) error = %v", err)
	}
}
