// Command release checks that every module of basis being released can be
// fetched and built by a stranger, and tags releases. A release is the
// modules whose version in versions.yaml is not tagged yet: any subset,
// one module at a time or none.
//
//	go run . check   [-root DIR] [-work DIR] [-keep] [-no-compare] [-no-hosts] [-no-install]
//	go run . release [-root DIR] [-versions FILE] [-dry-run]
//
// Both read versions.yaml at the repository root. Run them with GOWORK=off
// (the Makefile does): this module is a tool, not part of the workspace.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// hosts are the programs outside the workspace that stand for users who
// pick only the modules they need.
var hosts = []Host{
	{
		Dir:       "e2e/hosts/minimal",
		Forbidden: []string{"github.com/modelcontextprotocol/", "mvdan.cc/sh", "golang.org/x/term", "github.com/basis-go/basis/spawn", "github.com/basis-go/basis/mcpbind", "github.com/basis-go/basis/approver/terminal", "go.opentelemetry.io/", "github.com/basis-go/basis/otelbasis"},
		// Run in its fixture workspace: the tools run, sandboxed, behind
		// the workspace's rules, and the audit records the sandbox.
		Runs: []HostRun{
			{Dir: "testdata/ws", Args: []string{"word_count", `{"text": "one two three"}`}, Output: "minimal host: word_count: ok: 3",
				File: "audit.jsonl", FileHolds: `"sandbox":{"mode":"workspace-write"`},
			{Dir: "testdata/ws", Args: []string{"escape", "{}"}, Output: "Permission denied", Absent: "../escaped"},
			{Dir: "testdata/ws", Args: []string{"deploy", "{}"}, Output: "minimal host: deploy: refused: tool deploy denied: this workspace never deploys"},
		},
	},
	{
		Dir:               "e2e/hosts/spawnonly",
		Forbidden:         []string{"github.com/basis-go/basis/declared", "github.com/modelcontextprotocol/", "go.opentelemetry.io/"},
		ForbiddenPackages: []string{"github.com/basis-go/basis/declared"},
		Output:            "spawn-only host: hello from spawn",
	},
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "check":
		err = runCheck(os.Args[2:])
	case "release":
		err = runRelease(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release check [-root DIR] [-work DIR] [-keep] [-no-compare] [-no-hosts] [-no-install]\n       release release [-root DIR] [-versions FILE] [-dry-run]")
	os.Exit(2)
}

func runCheck(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	root := fs.String("root", "../..", "the repository root")
	work := fs.String("work", "", "scratch directory (default: a new temporary directory)")
	keep := fs.Bool("keep", false, "keep the scratch directory")
	noCompare := fs.Bool("no-compare", false, "skip gorelease and apidiff")
	noHosts := fs.Bool("no-hosts", false, "skip the host programs")
	noInstall := fs.Bool("no-install", false, "skip go install of the command")
	fs.Parse(args)
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	p, err := LoadPlan(absRoot)
	if err != nil {
		return err
	}
	tags, err := releaseTags(p)
	if err != nil {
		return err
	}
	releasing := p.Releasing(tags)
	if len(releasing) == 0 {
		*noCompare = true // no tools to build for a release of nothing
	}
	if *work == "" {
		if *work, err = os.MkdirTemp("", "basis-release-check-"); err != nil {
			return err
		}
	} else if *work, err = workDir(*work); err != nil {
		// Made here, not only by Check: the tools are built into it first.
		return err
	}
	if !*keep {
		defer os.RemoveAll(*work)
	}
	o := CheckOptions{Work: *work, Log: os.Stdout}
	if !*noCompare {
		o.Tools = filepath.Join(*work, "tools")
		if err := buildTools(o.Tools); err != nil {
			return err
		}
	}
	if !*noHosts {
		o.Hosts = hosts
	}
	if !*noInstall && len(p.Install) > 0 {
		o.Install = p.Prefix + "/" + p.Install[0]
		o.InstallArgs = []string{"version"}
	}
	if err := Check(p, o); err != nil {
		return err
	}
	fmt.Printf("release-check: ok: %d of %d modules in this release build as consumers see them\n", len(releasing), len(p.Modules))
	return nil
}

// buildTools builds gorelease and apidiff at the versions this module's
// go.mod pins (its tool lines).
func buildTools(dir string) error {
	for _, tool := range []string{"golang.org/x/exp/cmd/gorelease", "golang.org/x/exp/cmd/apidiff"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, filepath.Base(tool)), tool)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", tool, err, out)
		}
	}
	return nil
}

func runRelease(args []string) error {
	fs := flag.NewFlagSet("release", flag.ExitOnError)
	root := fs.String("root", "../..", "the repository root")
	versions := fs.String("versions", "", "the release plan (default: versions.yaml at the root)")
	dryRun := fs.Bool("dry-run", false, "print the tags and go.mod edits without making them")
	fs.Parse(args)
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	if *versions == "" {
		*versions = filepath.Join(absRoot, "versions.yaml")
	}
	p, err := LoadPlanFile(absRoot, *versions)
	if err != nil {
		return err
	}
	return Release(p, *dryRun, os.Stdout)
}
