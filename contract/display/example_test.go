package display_test

import (
	"fmt"

	"github.com/basis-go/basis/contract/display"
)

func ExampleEscape() {
	// A command whose end a right-to-left override would show reversed,
	// and an escape sequence that would erase the line before it.
	fmt.Println(display.Escape("rm -rf ~ \u202e# txt.olleh tac"))
	fmt.Println(display.Escape("ls\x1b[1A\x1b[2K"))
	// Output:
	// rm -rf ~ \u202e# txt.olleh tac
	// ls\u001b[1A\u001b[2K
}
