// Command basis is the tool runtime for LLM agents on the command line.
package main

import (
	"fmt"
	"os"
)

const usage = `usage: basis [-C DIR] [--config-dir DIR] [--no-shell] [--no-mcp] [--delegate 'ARGV…'] COMMAND

commands: tools, check, call, serve, rules, version
`

func main() {
	fmt.Fprint(os.Stderr, usage)
	os.Exit(2)
}
