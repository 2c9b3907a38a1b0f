// Command floor is the least a Go program that checks a call's input with
// github.com/santhosh-tekuri/jsonschema/v6 and runs the tool pays per
// call: it links the library (whose initialiser compiles every draft's
// metaschema) and runs /bin/cat on its own stdin and stdout, nothing else.
// BenchmarkBasisCallOverDirect reports `basis call` against it.
package main

import (
	"os"
	"os/exec"

	_ "github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	cmd := exec.Command("/bin/cat")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Exit(1)
	}
}
