//go:build unix

package workspace

import (
	"context"
	"testing"

	"github.com/basis-go/basis/approver"
)

// The approver that adds git warnings answers at once exactly when the one
// it wraps does: reading a repository's config waits on nothing.
func TestWarnAboutKeepsWhetherItAnswersAtOnce(t *testing.T) {
	w := &Workspace{}
	asking := approver.ApproverFunc(func(context.Context, approver.Request) (approver.Answer, error) {
		return approver.Answer{Decision: approver.Deny}, nil
	})
	for _, tc := range []struct {
		name string
		a    approver.Approver
		want bool
	}{
		{"AllowAll", approver.AllowAll(), true},
		{"DenyAll", approver.DenyAll(), true},
		{"an approver that may wait", asking, false},
	} {
		if got := approver.IsImmediate(w.warnAbout(tc.a)); got != tc.want {
			t.Errorf("%s wrapped: IsImmediate = %v, want %v", tc.name, got, tc.want)
		}
	}
}
