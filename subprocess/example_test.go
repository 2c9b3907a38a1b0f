//go:build unix

package subprocess_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/basis-go/basis/subprocess"
)

func Example() {
	res, err := subprocess.Run(context.Background(), &subprocess.Cmd{
		// No shell: tr receives its arguments as they are.
		Argv:    []string{"tr", "a-z", "A-Z"},
		Env:     subprocess.MergeEnv([]string{"PATH=" + os.Getenv("PATH")}, []string{"LANG=C"}),
		Stdin:   []byte(`{"job":"deploy"}`),
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println("bad command:", err)
		return
	}
	fmt.Println(res.Outcome)
	fmt.Println(string(res.Stdout))

	res, _ = subprocess.Run(context.Background(), &subprocess.Cmd{Argv: []string{"/bin/sh", "-c", "exit 3"}})
	fmt.Println(res.Err())
	// Output:
	// exited with code 0
	// {"JOB":"DEPLOY"}
	// exited with code 3
}
