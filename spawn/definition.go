//go:build unix

package spawn

import (
	"context"
	"encoding/json"

	"github.com/basis-go/basis/contract"
)

var _ contract.Definer = (*Tool)(nil)

// Definition returns what an approval of spawn covers
// ([contract.Definer]). spawn is basis's own code, so all a rule records
// of it is how its commands are confined: {"sandbox": PROFILE}, the
// [Options.Sandbox]'s Profile (else its Subject) for a command in the
// workspace root — so an approval given under one sandbox does not hold
// under a looser one, and does under a tighter one. Without a Sandbox it
// is nil: nothing beyond the name to bind to. When the sandbox cannot
// confine a command here, it is {}: commands are refused at the preview
// then, and tasks run unconfined anyway.
func (t *Tool) Definition(context.Context) (json.RawMessage, error) {
	if t.sandbox == nil {
		return nil, nil
	}
	c, err := t.confine(t.root)
	if err != nil {
		return json.RawMessage(`{}`), nil
	}
	profile := c.Profile
	if len(profile) == 0 {
		profile = c.Subject
	}
	return contract.CanonicalJSON(map[string]json.RawMessage{"sandbox": profile})
}
