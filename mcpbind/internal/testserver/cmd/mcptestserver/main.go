//go:build unix

// Command mcptestserver runs the testserver over stdio, for mcpbind's
// tests of real processes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/basis-go/basis/mcpbind/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	var opts testserver.Options
	flag.IntVar(&opts.PageSize, "page", 0, "tools per tools/list page")
	flag.IntVar(&opts.Extra, "extra", 0, "number of extra echo tools")
	flag.BoolVar(&opts.LongName, "long", false, "add a tool with a 200-character name")
	flag.BoolVar(&opts.Collide, "collide", false, "add two tools whose names sanitise to one")
	flag.BoolVar(&opts.Bidi, "bidi", false, "add a tool whose name holds bidirectional controls")
	flag.BoolVar(&opts.Big, "big", false, "add the tool big, which returns as much text as asked for")
	names := flag.String("names", "", "comma-separated names of extra echo tools")
	flag.BoolVar(&opts.Environ, "environ", false, "add the tool environ, which reports the working directory and environment")
	flag.BoolVar(&opts.TraceContext, "trace", false, "add the tool tracecontext, which returns the traceparent and tracestate of its call's _meta")
	callIDs := flag.Bool("ids", false, "with -trace, tracecontext also returns the JSON-RPC id of its call")
	stubborn := flag.String("stubborn", "", "ignore SIGTERM and stdin EOF, fork a grandchild, and write both pids to this file")
	sleeper := flag.Bool("sleeper", false, "sleep until killed (the stubborn server's grandchild)")
	daemon := flag.Bool("daemon", false, "start a sleeper in a session of its own, as a daemon would, and leave it")
	delay := flag.Duration("delay", 0, "wait this long before serving")
	flag.StringVar(&opts.Surfaces, "surfaces", "", "add resources, a template, a prompt, completions and the tools ask and sample, labelled with this")
	flag.Parse()
	if *names != "" {
		opts.Names = strings.Split(*names, ",")
	}
	if *sleeper {
		// Not select {}: with no other goroutine the runtime calls that a
		// deadlock and exits.
		for {
			time.Sleep(time.Hour)
		}
	}
	opts.Exit = os.Exit
	opts.Stderr = os.Stderr
	if *stubborn != "" {
		signal.Ignore(syscall.SIGTERM)
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		child := exec.Command(self, "-sleeper")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(*stubborn, fmt.Appendf(nil, "%d %d\n", os.Getpid(), child.Process.Pid), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if *daemon {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		child := exec.Command(self, "-sleeper")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	time.Sleep(*delay)
	fmt.Fprintln(os.Stderr, "mcptestserver: serving")
	var transport mcp.Transport = &mcp.StdioTransport{}
	if *callIDs {
		opts.CallIDs = &testserver.CallIDs{}
		transport = opts.CallIDs.Transport(transport)
	}
	err := testserver.New(opts).Run(context.Background(), transport)
	if *stubborn != "" {
		select {} // ignore the end of stdin too
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(1)
	}
}
