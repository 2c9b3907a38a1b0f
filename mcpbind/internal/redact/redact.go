package redact

import "strings"

// Mark stands where a credential was.
const Mark = "[redacted]"

// DisplayURL cuts the query, the fragment and any user info out of a URL
// as written: all three are places credentials are put.
func DisplayURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		authority := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			authority = rest[:j]
		}
		if k := strings.LastIndexByte(authority, '@'); k >= 0 {
			u = u[:i+3] + rest[k+1:]
		}
	}
	return u
}

// URL is DisplayURL with a mark that something was cut.
func URL(u string) string {
	shown := DisplayURL(u)
	if shown != u {
		if strings.ContainsAny(u, "?#") {
			return shown + "?" + Mark
		}
		return shown + " (user info " + Mark + ")"
	}
	return shown
}
