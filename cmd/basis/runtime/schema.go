package runtime

import (
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
)

// schemaFor returns the compiled input schema every call of tool is checked
// against. A declared tool compiled its own at load, so it is not compiled
// twice; any other tool's schema is compiled here, under the same rules
// and with the same refusal messages.
func schemaFor(tool contract.ExecutableTool, d contract.Descriptor) (*declared.InputSchema, error) {
	if dt, ok := tool.(*declared.Tool); ok {
		return dt.InputSchema(), nil
	}
	return declared.CompileInputSchema(d.InputSchema)
}
