//go:build unix

package approver

import (
	"strings"
	"unicode/utf8"

	"github.com/basis-go/basis/contract/display"
)

// maxReasonDetail bounds what an error from elsewhere (a hook's stderr, an
// approver's error) adds to a reason the model reads.
const maxReasonDetail = 300

// oneLine makes s fit in a reason: lines joined with " / ", other control
// characters escaped, and at most max bytes, cut at a character boundary
// with "..." when longer.
func oneLine(s string, max int) string {
	lines := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	s = display.Escape(strings.Join(lines, " / "))
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
