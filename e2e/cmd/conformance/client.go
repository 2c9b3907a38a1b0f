//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// clientMode is the client run's key in its baseline.
const clientMode = "client"

// The client commands the suite runs per scenario: go-sdk's
// everything-client (the reference), and cmd/conformanceclient, which
// does each scenario's work by running the built basis.
const (
	clientCommandPkg = "./cmd/conformanceclient"
	// browserPkg follows an authorization redirect as a browser would,
	// for basis's sign-in; the run goes on without it (every auth/
	// scenario then fails).
	browserPkg = "./cmd/oauthbrowser"
)

// clientRow is one client's run of the client suite.
type clientRow struct {
	Name   string
	Result Result
	Took   time.Duration
}

// clientRowNames are the client table's rows.
var clientRowNames = [2]string{
	"go-sdk v1.8.0 `conformance/everything-client`",
	"`basis` (`tools --json`, `call`), driven by [cmd/conformanceclient](cmd/conformanceclient)",
}

// runClients runs `conformance client --suite all` with everything-client
// and with conformanceclient driving bin/basis, and returns both rows.
func runClients(bin string, peers peerPaths, out string) ([2]clientRow, error) {
	var rows [2]clientRow
	env := clientEnv(bin)
	for i, command := range []string{filepath.Join(bin, "everything-client"), filepath.Join(bin, "conformanceclient")} {
		logf("client suite: %s", filepath.Base(command))
		start := time.Now()
		r, err := runClientSuite(command, env, peers, filepath.Join(out, filepath.Base(command)))
		if err != nil {
			return rows, fmt.Errorf("the client suite with %s: %w", filepath.Base(command), err)
		}
		rows[i] = clientRow{Name: clientRowNames[i], Result: r, Took: time.Since(start)}
	}
	return rows, nil
}

// clientEnv is the client commands' environment: conformanceclient finds
// basis by BASIS_CONFORMANCE_BASIS, and BROWSER is the redirect follower
// when it was built, else unset — the operator's own browser must never
// open for a test server.
func clientEnv(bin string) []string {
	var env []string
	for _, kv := range basisEnv("") {
		if !strings.HasPrefix(kv, "BROWSER=") && !strings.HasPrefix(kv, "BASIS_CONFIG_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "BASIS_CONFORMANCE_BASIS="+filepath.Join(bin, "basis"))
	if _, err := os.Stat(filepath.Join(bin, "oauthbrowser")); err == nil {
		env = append(env, "BROWSER="+filepath.Join(bin, "oauthbrowser"))
	}
	return env
}

// buildClients builds the client commands into bin: everything-client,
// conformanceclient and, when this tree has it, oauthbrowser.
func buildClients(bin string) error {
	pkgs := []string{clientPkg, clientCommandPkg}
	if _, err := os.Stat(browserPkg); err == nil {
		pkgs = append(pkgs, browserPkg)
	} else {
		logf("no %s in this tree: basis cannot sign in, so every auth/ scenario fails", browserPkg)
	}
	return goBuild(".", bin+string(filepath.Separator), pkgs...)
}

// runClientSuite runs the pinned suite's client side with command, its
// results in out, and reads them.
func runClientSuite(command string, env []string, peers peerPaths, out string) (Result, error) {
	return suiteRun(peers, env, out, readClientResults, "client", "--command", command, "--suite", "all", "--output-dir", out)
}
