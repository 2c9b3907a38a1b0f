//go:build unix

package mcpbind

import (
	"github.com/basis-go/basis/configfile"
	"slices"
	"strings"

	"github.com/basis-go/basis/contract"
)

// layer makes the effective servers from the config files' (most specific
// first: the workspace's, the operator's, the host's), in two steps.
//
// First, names that would make tool names ambiguous are refused: a server
// whose tool prefix (mcp__<name>__) begins another's, or is begun by it,
// could be sent a call meant for the other (mcp__a__b__c is tool b__c of
// a, or tool c of a__b). The operator's and the host's servers are kept
// and the workspace's refused, so a repository can never break the
// operator's tools; within one file the first by name is kept.
//
// Then a name in a more specific layer shadows the same name below it —
// but only a workspace file the operator trusted shadows anything: an
// untrusted (or changed) file's servers come last, so the operator's
// server of the same name keeps working, and the workspace's is listed
// untrusted only when nothing else has its name.
func layer(layers [][]ServerConfig, files []ConfigFile) (servers, shadowed []ServerConfig, errs []error) {
	trusted := func(s ServerConfig) bool {
		if !s.Origin.workspace() {
			return true
		}
		i := slices.IndexFunc(files, func(f ConfigFile) bool { return f.Path == s.File })
		return i >= 0 && files[i].Trust == Trusted
	}
	var all []ServerConfig
	for _, l := range layers {
		all = append(all, l...)
	}

	// Step 1: ambiguous names, judged in order of authority.
	byAuthority := slices.Clone(all)
	slices.SortStableFunc(byAuthority, func(a, b ServerConfig) int { return authority(a) - authority(b) })
	var kept []ServerConfig
	for _, s := range byAuthority {
		// A server with a prefix of its own is found by that prefix, which
		// never begins with mcp__: its name makes nothing ambiguous.
		j := slices.IndexFunc(kept, func(k ServerConfig) bool {
			return k.Name != s.Name && !k.customPrefix() && !s.customPrefix() && ambiguous(k.Name, s.Name)
		})
		if j < 0 {
			kept = append(kept, s)
			continue
		}
		other := kept[j]
		errs = append(errs, &configfile.Error{File: s.File, Subject: subjectOf(printableName(s.Name)), Err: newProblem(errInvalidValue,
			"its tools would be named like those of server "+printableName(other.Name)+whereFrom(other)+
				" ("+serverPrefix(s.Name)+"… and "+serverPrefix(other.Name)+"…), so a call could reach either; rename one of them")})
	}
	isKept := func(s ServerConfig) bool {
		return slices.ContainsFunc(kept, func(k ServerConfig) bool { return k.Name == s.Name && k.File == s.File && k.Origin == s.Origin })
	}

	// Step 2: shadowing by name; an untrusted workspace file shadows
	// nothing.
	var order []ServerConfig
	for _, s := range all {
		if isKept(s) && trusted(s) {
			order = append(order, s)
		}
	}
	for _, s := range all {
		if isKept(s) && !trusted(s) {
			order = append(order, s)
		}
	}
	taken := map[string]bool{}
	for _, s := range order {
		if taken[s.Name] {
			shadowed = append(shadowed, s)
			continue
		}
		taken[s.Name] = true
		servers = append(servers, s)
	}
	return servers, shadowed, errs
}

// authority orders origins for step 1 of layer: the operator's file,
// then the host's servers, then the workspace's.
func authority(s ServerConfig) int {
	switch s.Origin {
	case OriginOperator:
		return 0
	case OriginHost:
		return 1
	}
	return 2
}

// whereFrom names a server's file for a message: " in FILE", or "" for
// a host's server.
func whereFrom(s ServerConfig) string {
	if s.File == "" {
		return ""
	}
	return " in " + s.File
}

// routeLen is how much of a tool name tells its server: all of a name
// that fits, the part before the hash of a shortened one.
const routeLen = contract.MaxNameLen - hashLen - 1

// ambiguous reports whether tool names of servers a and b could be read
// as either's: one's prefix mcp__<name>__ begins the other's (as far as a
// shortened name keeps it).
func ambiguous(a, b string) bool {
	pa, pb := routeKey(a), routeKey(b)
	return strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
}

func routeKey(server string) string {
	p := serverPrefix(server)
	if len(p) > routeLen {
		p = p[:routeLen]
	}
	return p
}

// nameProblem says why a server's name cannot be used, or "": "__" in
// it (after sanitising) would make mcp__<server>__<tool> ambiguous.
func nameProblem(name string) string {
	if strings.Contains(sanitize(name), "__") {
		return `the name holds "__" (characters outside A-Z a-z 0-9 _ - count as _), which separates the server from the tool in mcp__<server>__<tool>, so its tool names could be read as another server's; rename the server`
	}
	return ""
}
