package inputschema_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/basis-go/basis/inputschema"
)

func Example() {
	schema, err := inputschema.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {"job": {"type": "string"}},
		"required": ["job"]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(schema.Check(context.Background(), "jenkins_job", json.RawMessage(`{"job": "nightly"}`)))
	fmt.Println(schema.Check(context.Background(), "jenkins_job", json.RawMessage(`{"job": 7}`)))
	// Output:
	// <nil>
	// the input for jenkins_job does not match its schema: /job: expected string, but got number
}
