// Package contract is the one contract every basis tool implements, and the
// vocabulary the rest of basis shares.
//
// An agent's model asks for a tool call — a name and a JSON object — and the
// host runs it. Whatever provides the tool (a program declared in a
// workspace's .basis/tools.json, the native spawn tool, an MCP server, or a
// Go value a host registers itself), it reaches the runtime through the same
// interface, [ExecutableTool]. There is one contract and there are many
// bindings; a binding is only a way to produce values of this interface.
//
// The contract has one method that matters for safety:
// [ExecutableTool.AuthorizationPreview]. Before a call runs, the tool says,
// for this call and these arguments, what is about to happen: which program,
// which command line, which server, where. An approver — a person at a
// terminal, a hook program, a rule remembered from earlier — judges that
// [Preview], not the tool's name, because a name is chosen by whoever
// declared the tool and says nothing about the act. A preview that fails is
// a refusal on its own: nothing is asked and nothing runs.
//
// The package also holds what every binding must agree on: the tool-name
// rules ([ValidName], the reserved [MCPPrefix]), the side-effect scale
// ([SideEffect]), canonical JSON for preview subjects ([CanonicalJSON]), and
// two values carried in a [context.Context]: a progress hook through which
// long work streams lines to whoever is watching ([WithProgress],
// [Progress]), and the delegation depth ([WithDelegationDepth],
// [DelegationDepth]).
//
// The package depends on the standard library only, so a host may import it
// without taking on anything else.
package contract
