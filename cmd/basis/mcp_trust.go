//go:build !nomcp

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/basis-go/basis/mcpbind"
	"github.com/basis-go/basis/mcpbind/mcphost"
	basisws "github.com/basis-go/basis/workspace"
)

const mcpHelp = `The workspace's .mcp.json names MCP servers: programs the repository asks
to run. basis starts them only once you trusted the file's exact content;
an edited file needs trusting again. Servers in your own
<config dir>/mcp.json need no trust.

  list         the MCP config files basis reads here, whether each is trusted,
               their servers, and each remote server's sign-in; starts nothing
  trust        trust the workspace's .mcp.json as it is now
  untrust      forget that trust; its servers stop being started
  login NAME   sign in to remote server NAME in your browser ($BROWSER)
  logout NAME  forget NAME's sign-in
`

func cmdMCP(ctx context.Context, g *globals, args []string, e *env) int {
	c := newCommand("mcp", "mcp list | trust | untrust | login NAME | logout NAME", mcpHelp)
	args, code := c.parseArgs(args, 1, 2, e)
	if code >= 0 {
		return code
	}
	w, err := openWorkspace(ctx, g, e)
	if err != nil {
		return configErr(e, []error{err})
	}
	switch args[0] {
	case "login", "logout":
		if len(args) != 2 {
			return usageErr(e, "mcp %s: name the server: basis mcp %s NAME", args[0], args[0])
		}
		if args[0] == "login" {
			return w.mcpLogin(ctx, args[1])
		}
		return w.mcpLogout(ctx, args[1])
	}
	if len(args) != 1 {
		return usageErr(e, "mcp: wrong number of arguments\nusage: basis mcp list | trust | untrust | login NAME | logout NAME")
	}
	switch args[0] {
	case "list":
		return w.mcpList(ctx)
	case "trust":
		return w.mcpTrust(ctx)
	case "untrust":
		return w.mcpUntrust(ctx)
	}
	return usageErr(e, "mcp: unknown subcommand %q%s; use list, trust, untrust, login or logout", args[0], didYouMean(args[0], []string{"list", "trust", "untrust", "login", "logout"}))
}

// mcpList prints each config file with its trust and servers.
func (w *workspace) mcpList(ctx context.Context) int {
	e := w.e
	cfg, err := mcphost.Load(ctx, w.root, w.configDir)
	var errs []error
	if err != nil {
		errs = basisws.Problems(err)
	}
	for _, err := range errs {
		fmt.Fprintf(e.stderr, "basis: %v\n", err)
	}
	if cfg == nil || len(cfg.Files) == 0 {
		fmt.Fprintf(e.stdout, "no MCP config file here: basis reads %s and %s\n",
			w.displayPath(filepath.Join(w.root, mcpbind.WorkspaceFileName)), w.displayPath(filepath.Join(w.configDir, mcpbind.OperatorFileName)))
		return exitCode(errs)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tORIGIN\tTRUST\tSERVERS")
	for _, f := range cfg.Files {
		servers, shadowed := cfg.ServersIn(f.Path)
		for _, name := range shadowed {
			servers = append(servers, name+" (shadowed)")
		}
		names := strings.Join(servers, ", ")
		if names == "" {
			names = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.displayPath(f.Path), f.Origin, f.Trust, names)
	}
	if err := tw.Flush(); err != nil {
		return usageErr(e, "writing the list: %v", err)
	}
	w.mcpSignIns(ctx)
	for _, f := range cfg.Files {
		switch {
		case f.Trust == mcpbind.Trusted:
		case len(f.Changed) > 0:
			fmt.Fprintf(e.stdout, "%s's servers do not start: %s changed since you trusted it; look at what they run now, then run: basis mcp trust\n", w.displayPath(f.Path), w.changedFiles(f))
		default:
			fmt.Fprintf(e.stdout, "%s's servers do not start until you run: basis mcp trust\n", w.displayPath(f.Path))
		}
	}
	return exitCode(errs)
}

// changedFiles names the files a trusted config file's servers run that
// changed since the trust: "server.js, .basis/bin/server".
func (w *workspace) changedFiles(f mcpbind.ConfigFile) string {
	shown := make([]string, len(f.Changed))
	for i, p := range f.Changed {
		shown[i] = w.displayPath(p)
	}
	return strings.Join(shown, ", ")
}

func exitCode(errs []error) int {
	if len(errs) > 0 {
		return exitUsage
	}
	return exitOK
}

// mcpTrust trusts the workspace's .mcp.json as it is now.
func (w *workspace) mcpTrust(ctx context.Context) int {
	e := w.e
	rec, names, err := mcphost.TrustWorkspace(ctx, w.root, w.configDir)
	if errors.Is(err, fs.ErrNotExist) {
		return usageErr(e, "mcp trust: there is no %s in this workspace (%s) to trust", mcpbind.WorkspaceFileName, w.root)
	}
	if err != nil {
		// Outside the workspace (trusting it would trust another
		// repository's file), or unreadable.
		return configErr(e, basisws.Problems(err))
	}
	fmt.Fprintf(e.stdout, "trusted %s (sha256 %s…), recorded in %s\n", w.displayPath(rec.Path), shortHash(rec.SHA256), w.displayPath(mcphost.NewTrustStore(w.configDir).Path()))
	if len(rec.Files) > 0 {
		var pinned []string
		for _, p := range slices.Sorted(maps.Keys(rec.Files)) {
			pin := rec.Files[p]
			if sum, ok := strings.CutPrefix(pin, "sha256:"); ok {
				pin = "sha256 " + shortHash(sum) + "…"
			}
			pinned = append(pinned, w.displayPath(p)+" ("+pin+")")
		}
		fmt.Fprintf(e.stdout, "and what its servers run from the workspace, as it is now: %s; a change to one needs trusting again\n", strings.Join(pinned, ", "))
	}
	if len(names) > 0 {
		fmt.Fprintf(e.stdout, "its servers start from now on: %s; an edit to the file needs trusting again\n", strings.Join(names, ", "))
	}
	return exitOK
}

// mcpUntrust forgets the workspace's .mcp.json.
func (w *workspace) mcpUntrust(ctx context.Context) int {
	e := w.e
	path := mcphost.WorkspaceFile(w.root)
	store := mcphost.NewTrustStore(w.configDir)
	removed, err := store.Untrust(ctx, path)
	if err != nil {
		return configErr(e, basisws.Problems(err))
	}
	if !removed {
		fmt.Fprintf(e.stdout, "%s was not trusted; nothing changed\n", w.displayPath(path))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s is no longer trusted: its servers do not start until you run basis mcp trust\n", w.displayPath(path))
	return exitOK
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
