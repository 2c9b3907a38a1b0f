package main

import (
	"fmt"
	"os"

	// Its initialiser is the helper: started by the sandbox (argv[0]
	// basis-sandbox and a request), it confines itself and executes the
	// program, or exits saying why not, before main.
	_ "github.com/basis-go/basis/sandbox/internal/trampoline"
)

func main() {
	fmt.Fprintln(os.Stderr, "basis-sandbox: the sandbox's helper, which basis starts to confine a program; it runs nothing by itself (install it beside basis)")
	os.Exit(2)
}
