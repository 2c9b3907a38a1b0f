//go:build unix

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// cacheDirFor returns the cache a workspace's sandboxed programs get:
// <user cache dir>/basis/sandbox/<workspace name>-<hash of its path>, or
// "" when the user has no cache directory.
//
// Never the user cache directory itself: the operator's own programs read
// it (Go's build cache, npm's, pip's), so an entry a sandboxed program
// wrote there would be code the operator's next build runs. One per
// workspace, because a workspace's programs can write that workspace
// anyway, while a cache shared with another workspace would let one
// repository's program plant what another repository's sandboxed build
// compiles.
func cacheDirFor(workspace string) string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	sum := sha256.Sum256([]byte(workspace))
	name := filepath.Base(workspace)
	if name == "/" || name == "." || strings.HasPrefix(name, ".") {
		name = "workspace"
	}
	return filepath.Join(dir, "basis", "sandbox", name+"-"+hex.EncodeToString(sum[:8]))
}

// cacheEnv is what points a program's tools at the sandbox's cache,
// overriding what the program inherited: XDG_CACHE_HOME (which most
// tools follow) and the variables of the tools that do not follow it or
// that an operator's environment often sets.
//
// GOMODCACHE is the sandbox's own too: it holds module sources that `go
// build` compiles without checking them again, so one a sandboxed
// program can write must not be the operator's. The cost: a sandboxed
// build downloads (and so needs the network for) modules the operator
// already has, or the operator lets it read them with GOPROXY=file://
// (see the README). CARGO_HOME is left alone: besides its registry cache
// it holds cargo's config, credentials and installed programs.
func cacheEnv(cache string) []string {
	return []string{
		"XDG_CACHE_HOME=" + cache,
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"GOMODCACHE=" + filepath.Join(cache, "go-mod"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
		"PIP_CACHE_DIR=" + filepath.Join(cache, "pip"),
		"YARN_CACHE_FOLDER=" + filepath.Join(cache, "yarn"),
	}
}

// withVars sets each NAME=value of vars in env, replacing every entry of
// that name.
func withVars(env []string, vars ...string) []string {
	names := make(map[string]bool, len(vars))
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		names[name] = true
	}
	out := make([]string, 0, len(env)+len(vars))
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !names[name] {
			out = append(out, e)
		}
	}
	return append(out, vars...)
}
