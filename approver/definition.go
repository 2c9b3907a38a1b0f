//go:build unix

package approver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

// A tool's definition (see [contract.Definer]) is what an allow rule
// approves besides the tool's name and source: a JSON object whose members
// must all be equal for the rule to match, except "sandbox", which may be
// tighter than the approved one (see [CompareDefinitions]).

// definition is a tool's definition parsed for matching.
type definition struct {
	// canonical is the whole definition in canonical JSON.
	canonical string
	// rest is the canonical JSON of every member but "sandbox": equal
	// rests are the first half of a match.
	rest string
	// members holds each member's canonical JSON, for describing changes.
	members map[string]string
	// sandbox is the "sandbox" member; nil when there is none.
	sandbox *profile
	// invalid marks a request's definition that could not be read: it
	// matches no rule.
	invalid bool
}

// errInvalidDefinition is wrapped by the error for a definition that is
// not one JSON object.
var errInvalidDefinition = errors.New("a tool's definition must be one JSON object")

// parseDefinition reads a definition into its canonical parts; empty raw
// is no definition (nil).
func parseDefinition(raw json.RawMessage) (*definition, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, errInvalidDefinition
	}
	d := &definition{members: make(map[string]string, len(top))}
	all := make(map[string]json.RawMessage, len(top))
	for k, v := range top {
		c, err := canonical(v)
		if err != nil {
			return nil, errInvalidDefinition
		}
		d.members[k] = string(c)
		all[k] = c
	}
	whole, err := marshalNoEscape(all)
	if err != nil {
		return nil, errInvalidDefinition
	}
	d.canonical = string(whole)
	if sb, ok := all["sandbox"]; ok {
		d.sandbox = parseProfile(sb)
		delete(all, "sandbox")
	}
	rest, err := marshalNoEscape(all)
	if err != nil {
		return nil, errInvalidDefinition
	}
	d.rest = string(rest)
	return d, nil
}

// canonical is raw in canonical JSON.
func canonical(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return contract.CanonicalJSON(v)
}

// canonicalDefinition returns def in canonical JSON, as rules files hold
// it and as [definitionDigest] hashes it; nil for an empty def. A def that
// is not one JSON object is an error wrapping [errInvalidDefinition].
func canonicalDefinition(def json.RawMessage) (json.RawMessage, error) {
	d, err := parseDefinition(def)
	if err != nil || d == nil {
		return nil, err
	}
	return json.RawMessage(d.canonical), nil
}

// definitionDigest returns "sha256:" and the hex SHA-256 of def's
// canonical form: one short name for a definition, as "basis rules list
// --json" shows it. It is "" for an empty or unreadable def.
func definitionDigest(def json.RawMessage) string {
	c, err := canonicalDefinition(def)
	if err != nil || c == nil {
		return ""
	}
	sum := sha256.Sum256(c)
	return configfile.HashPrefix + hex.EncodeToString(sum[:])
}

// Digest returns "sha256:…" of the definition the rule approved, or "".
func (r Rule) Digest() string { return definitionDigest(r.Definition) }

// covers reports whether an allow rule approved for approved covers a call
// of a tool whose definition is now current: both absent, or the same but
// for a sandbox that is as tight or tighter.
func covers(approved, current *definition) bool {
	switch {
	case approved == nil || current == nil:
		return approved == nil && current == nil
	case current.invalid || approved.rest != current.rest:
		return false
	}
	return current.sandbox.within(approved.sandbox)
}

// CompareDefinitions reports whether an allow rule that recorded approved
// covers a tool whose definition is now current (a tighter sandbox still
// does), and what changed, one phrase each: `command was ["./fmt.sh"], is
// now ["python3","fmt.py"]`.
func CompareDefinitions(approved, current json.RawMessage) (bool, []string, error) {
	a, err := parseDefinition(approved)
	if err != nil {
		return false, nil, fmt.Errorf("the approved definition: %w", err)
	}
	c, err := parseDefinition(current)
	if err != nil {
		return false, nil, fmt.Errorf("the current definition: %w", err)
	}
	if covers(a, c) {
		return true, nil, nil
	}
	return false, describeChanges(a, c), nil
}

// describeChanges says how current differs from approved, member by
// member (and within members that are objects, key by key).
func describeChanges(approved, current *definition) []string {
	switch {
	case approved == nil && current == nil:
		return nil
	case approved == nil:
		return []string{"the rule records no definition of the tool (it was made before approvals covered what they approved), and the tool has one"}
	case current == nil:
		return []string{"the tool has no definition now"}
	case current.invalid:
		return []string{"the tool's definition cannot be read"}
	}
	var out []string
	for _, k := range unionKeys(approved.members, current.members) {
		was, wasOK := approved.members[k]
		now, nowOK := current.members[k]
		if k == "sandbox" && current.sandbox.within(approved.sandbox) {
			continue
		}
		out = append(out, diffMember(k, was, wasOK, now, nowOK)...)
	}
	if len(out) == 0 {
		// Equal members that compare unequal cannot happen; say so
		// rather than nothing.
		out = []string{"the definition differs"}
	}
	return out
}

func unionKeys(a, b map[string]string) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// diffMember describes one member's change; members that are objects on
// both sides are compared key by key ("files /repo/x.sh was …").
func diffMember(name, was string, wasOK bool, now string, nowOK bool) []string {
	switch {
	case wasOK && nowOK && was == now:
		return nil
	case !wasOK:
		return []string{fmt.Sprintf("%s added: %s", name, showValue(now))}
	case !nowOK:
		return []string{fmt.Sprintf("%s removed (was %s)", name, showValue(was))}
	}
	var a, b map[string]json.RawMessage
	if json.Unmarshal([]byte(was), &a) == nil && json.Unmarshal([]byte(now), &b) == nil && a != nil && b != nil {
		am, bm := compactMembers(a), compactMembers(b)
		var out []string
		for _, k := range unionKeys(am, bm) {
			out = append(out, diffMember(name+" "+k, am[k], hasKey(am, k), bm[k], hasKey(bm, k))...)
		}
		return out
	}
	return []string{fmt.Sprintf("%s was %s, is now %s", name, showValue(was), showValue(now))}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func compactMembers(m map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if c, err := canonical(v); err == nil {
			out[k] = string(c)
		} else {
			out[k] = string(v)
		}
	}
	return out
}

var longHash = regexp.MustCompile(`sha256:([0-9a-f]{12})[0-9a-f]+`)

// maxValueShown bounds a value in a change's description.
const maxValueShown = 160

// showValue is a member's JSON for a person: content hashes cut to their
// first twelve digits, the whole on one line and bounded.
func showValue(v string) string {
	return oneLine(longHash.ReplaceAllString(v, "sha256:$1…"), maxValueShown)
}

// profile is a definition's "sandbox" member: how the tool's program is
// confined, in the vocabulary of the sandbox module's description
// ({"mode", "network", "network_cut", "write"}).
type profile struct {
	raw string
	// opaque: not in that vocabulary; only an equal profile is as tight.
	opaque  bool
	mode    string
	network string
	cut     string
	write   []string
	// protected is what stays read-only inside the writable directories:
	// more is tighter.
	protected []string
	// other is the canonical JSON of any other members, which must be
	// equal.
	other string
}

func parseProfile(raw json.RawMessage) *profile {
	p := &profile{raw: string(raw)}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		p.opaque = true
		return p
	}
	str := func(k string, into *string) bool {
		v, ok := m[k]
		if !ok {
			return true
		}
		delete(m, k)
		return json.Unmarshal(v, into) == nil
	}
	ok := str("mode", &p.mode) && str("network", &p.network) && str("network_cut", &p.cut)
	for key, into := range map[string]*[]string{"write": &p.write, "protected": &p.protected} {
		if v, has := m[key]; has {
			delete(m, key)
			ok = ok && json.Unmarshal(v, into) == nil
		}
	}
	if !ok {
		p.opaque = true
		return p
	}
	other, err := marshalNoEscape(m)
	if err != nil {
		p.opaque = true
		return p
	}
	p.other = string(other)
	return p
}

// Ranks of the sandbox vocabulary: higher allows less.
var (
	modeRank = map[string]int{"off": 0, "workspace-write": 1, "read-only": 2}
	cutRank  = map[string]int{"unavailable": 0, "landlock-tcp": 1, "namespace": 2}
)

// within reports whether confinement p allows no more than approved: a
// mode at least as strict, no network where approved had none (cut at
// least as well), every writable directory inside one approved could
// write, and — unless p writes nowhere (read-only) — every path approved
// kept read-only still protected. No profile is no confinement: anything
// is within it, and it is within nothing but itself.
func (p *profile) within(approved *profile) bool {
	switch {
	case approved == nil:
		return true
	case p == nil:
		return false
	case p.raw == approved.raw:
		return true
	case p.opaque || approved.opaque || p.other != approved.other:
		return false
	}
	if !ranked(modeRank, p.mode, approved.mode) {
		return false
	}
	if approved.network != "allowed" {
		if p.network != approved.network {
			return false
		}
		if approved.cut != "" && !ranked(cutRank, p.cut, approved.cut) {
			return false
		}
	}
	for _, w := range p.write {
		if !slices.ContainsFunc(approved.write, func(limit string) bool { return configfile.Within(w, limit) }) {
			return false
		}
	}
	if p.mode != "read-only" {
		for _, kept := range approved.protected {
			if !slices.Contains(p.protected, kept) {
				return false
			}
		}
	}
	return true
}

// ranked reports whether value is at least as strict as approved in
// ranks; values the ranks do not know must be equal.
func ranked(ranks map[string]int, value, approved string) bool {
	v, vok := ranks[value]
	a, aok := ranks[approved]
	if !vok || !aok {
		return value == approved
	}
	return v >= a
}

// definitions caches the definitions of requests, parsed, by their bytes:
// a tool's definition is the same call after call, so reading it costs
// one map look-up. It is bounded; when full it starts again.
type definitions struct {
	mu     sync.Mutex
	parsed map[string]*definition
}

// maxCachedDefinitions bounds the cache: far more tools than a roster has.
const maxCachedDefinitions = 1024

// of returns raw parsed; a definition that cannot be read is one that
// matches no rule.
func (c *definitions) of(raw json.RawMessage) *definition {
	if len(raw) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.parsed[string(raw)]; ok {
		return d
	}
	d, err := parseDefinition(raw)
	if err != nil {
		d = &definition{invalid: true}
	}
	if c.parsed == nil || len(c.parsed) >= maxCachedDefinitions {
		c.parsed = make(map[string]*definition)
	}
	c.parsed[string(raw)] = d
	return d
}

// StaleRule is an allow rule that would match a call but for the tool's
// definition, which changed since the rule approved it.
type StaleRule struct {
	// Rule is the rule, a copy.
	Rule Rule
	// Changes say what changed since the approval, one phrase each:
	// `command was ["./fmt.sh"], is now ["python3","fmt.py"]`.
	Changes []string
}

// String says which rule allowed the tool as it was, and what changed.
func (s StaleRule) String() string {
	if len(s.Rule.Definition) == 0 {
		bound := s.Rule
		bound.Match, bound.NotMatch = nil, nil
		return fmt.Sprintf("%s (%s) records no definition of %s, so it allows none (it was made before an approval covered what a tool runs); look at the tool as it is now, then rebind the rule with: %s",
			ruleOrigin(&s.Rule), s.Rule.String(), s.Rule.Tool, rebindCommand(bound))
	}
	return fmt.Sprintf("%s (%s) allowed %s as it was; it has changed since: %s", ruleOrigin(&s.Rule), s.Rule.String(), s.Rule.Tool, strings.Join(s.Changes, "; "))
}
