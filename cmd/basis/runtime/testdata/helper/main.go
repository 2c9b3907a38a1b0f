// Command helper is the program the runtime's tests run through a process
// tool, so exit codes, signals, timeouts and output are a real process's.
//
// Its flags act in order of this list, whatever order they are given in:
//
//	-touch PATH    create PATH (proof the program ran)
//	-sleep D       sleep for D (a time.Duration)
//	-stdin         copy stdin to stdout
//	-stdout TEXT   print TEXT, $NAME expanded from the environment
//	-stderr TEXT   print TEXT to stderr, expanded the same way
//	-exit N        exit with code N
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	touch := flag.String("touch", "", "create this file")
	sleep := flag.Duration("sleep", 0, "sleep this long")
	stdin := flag.Bool("stdin", false, "copy stdin to stdout")
	stdout := flag.String("stdout", "", "print this")
	stderr := flag.String("stderr", "", "print this to stderr")
	exit := flag.Int("exit", 0, "exit code")
	flag.Parse()

	if *touch != "" {
		if err := os.WriteFile(*touch, nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(100)
		}
	}
	time.Sleep(*sleep)
	if *stdin {
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(100)
		}
	}
	if *stdout != "" {
		fmt.Println(os.ExpandEnv(*stdout))
	}
	if *stderr != "" {
		fmt.Fprintln(os.Stderr, os.ExpandEnv(*stderr))
	}
	os.Exit(*exit)
}
