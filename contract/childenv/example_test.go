package childenv_test

import (
	"fmt"

	"github.com/basis-go/basis/contract/childenv"
)

func ExampleInherited() {
	environ := []string{
		"PATH=/usr/bin:/bin",
		"LANG=C.UTF-8",
		"BASIS_SERVE_TOKEN=s3rv3",
		"GITHUB_TOKEN=ghp_x",
		"AWS_SECRET_ACCESS_KEY=aws_x",
	}
	// The operator lets GitHub's variables through; nothing lets basis's
	// own through.
	for _, entry := range childenv.Inherited(environ, []string{"GITHUB_*"}) {
		fmt.Println(entry)
	}
	// Output:
	// PATH=/usr/bin:/bin
	// LANG=C.UTF-8
	// GITHUB_TOKEN=ghp_x
}
