//go:build unix

package runtime

import (
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/inputschema"
)

// compiledSchema is implemented by a tool that compiled its input schema
// already (a declared tool does, at load), so it is not compiled twice.
type compiledSchema interface {
	InputSchema() *inputschema.Schema
}

// schemaFor returns the compiled input schema every call of tool is checked
// against: the tool's own when it has one, else compiled here, under the
// same rules and with the same refusal messages.
func schemaFor(tool contract.ExecutableTool, d contract.Descriptor) (*inputschema.Schema, error) {
	if c, ok := tool.(compiledSchema); ok {
		if s := c.InputSchema(); s != nil {
			return s, nil
		}
	}
	return inputschema.Compile(d.InputSchema)
}
