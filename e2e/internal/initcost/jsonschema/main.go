// Command jsonschema does nothing but link
// github.com/santhosh-tekuri/jsonschema/v6, the JSON Schema library basis
// checks every input with: BenchmarkJSONSchemaInit measures what its
// package initialiser (every draft's metaschema compiled) adds to each
// process that links it, the basis command included.
package main

import _ "github.com/santhosh-tekuri/jsonschema/v6"

func main() {}
