package redact

import "testing"

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, display, redacted string }{
		{"https://mcp.example.com/v1", "https://mcp.example.com/v1", "https://mcp.example.com/v1"},
		{"https://mcp.example.com/v1?key=s3cret#frag", "https://mcp.example.com/v1", "https://mcp.example.com/v1?[redacted]"},
		{"https://user:pw@mcp.example.com/v1", "https://mcp.example.com/v1", "https://mcp.example.com/v1 (user info [redacted])"},
		{"https://user:pw@mcp.example.com/a@b?x=1", "https://mcp.example.com/a@b", "https://mcp.example.com/a@b?[redacted]"},
		{"not a url", "not a url", "not a url"},
	} {
		if got := DisplayURL(tc.in); got != tc.display {
			t.Errorf("DisplayURL(%q) = %q, want %q", tc.in, got, tc.display)
		}
		if got := URL(tc.in); got != tc.redacted {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.redacted)
		}
	}
}
