package contract

import (
	"context"
	"encoding/json"
)

// Definer is implemented by a tool that can say what it is, apart from any
// one call: the definition an approval of the tool covers. A rule that
// allows the tool records the definition the operator approved and stops
// matching once the tool's definition changes, so a repository that
// rewrites what an approved name runs gets the call asked about again
// instead of run.
//
// The runtime asks for it before each consequential call and when a rule
// is written; it is the tool's state now, so a tool that runs a file
// hashes it here, not once at load.
type Definer interface {
	// Definition returns the tool's definition as a JSON object, canonical
	// (see [CanonicalJSON]): what runs and how — for a program its resolved
	// path, its arguments as written, its working directory, the names of
	// the variables it is given, its side effect, whether it may reach the
	// network, the sha256 of files it runs that lie in the workspace, and
	// under "sandbox" the profile of its confinement. It holds no secret:
	// names, values as written and content hashes only, because rules
	// files, prompts and listings show it. A "sandbox" member is compared
	// by what it allows: a tighter one still matches an approval of a
	// looser one (the approver package says how).
	//
	// Nil with no error means the tool has nothing to bind an approval to
	// beyond its name and source. An error refuses the call: a tool that
	// cannot say what it is cannot be approved.
	Definition(ctx context.Context) (json.RawMessage, error)
}
