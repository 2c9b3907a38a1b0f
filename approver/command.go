package approver

import "encoding/json"

// commandPattern is a compiled Rule.Command.
type commandPattern struct {
	words []glob
	// rest: the rule ended in a lone "*", which matches any number of
	// further words (none included).
	rest bool
}

func compileCommand(words []string) commandPattern {
	var c commandPattern
	if n := len(words); n > 0 && words[n-1] == "*" {
		c.rest = true
		words = words[:n-1]
	}
	c.words = make([]glob, len(words))
	for i, w := range words {
		c.words[i] = compileWord(w)
	}
	return c
}

// match reports whether argv, one simple command, matches the pattern.
func (c *commandPattern) match(argv []string) bool {
	if len(argv) < len(c.words) || !c.rest && len(argv) != len(c.words) {
		return false
	}
	for i := range c.words {
		if !c.words[i].match(argv[i]) {
			return false
		}
	}
	return true
}

// subjectCommands returns the Subject's top-level "commands" list: the
// simple commands a tool found in what it is about to run. ok is false when
// there is no usable list: the key is absent or null (the tool could not
// analyse the command), the list is empty, an entry is not a non-empty list
// of strings, or the Subject is not a JSON object. Command rules match
// nothing then.
func subjectCommands(subject string) (commands [][]string, ok bool) {
	// A map, not a struct: struct fields would also take "Commands".
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(subject), &top) != nil {
		return nil, false
	}
	raw, found := top["commands"]
	if !found || string(raw) == "null" || json.Unmarshal(raw, &commands) != nil || len(commands) == 0 {
		return nil, false
	}
	for _, argv := range commands {
		if len(argv) == 0 {
			return nil, false
		}
	}
	return commands, true
}
