package main

import "fmt"

// elicitMode says how `basis call` answers an MCP server's own questions
// (elicitation) during the call: --elicit.
type elicitMode string

const (
	// elicitDecline: basis offers its servers no elicitation, so a server
	// does not ask, and one that asks anyway is refused.
	elicitDecline elicitMode = "decline"
	// elicitDefaults accepts each form with its schema's defaults, for
	// scripts and tests; a form with a required field without a default
	// is declined.
	elicitDefaults elicitMode = "defaults"
	// elicitPrompt asks at the terminal.
	elicitPrompt elicitMode = "prompt"
)

// chooseElicit maps --elicit to a mode: unset, prompt when somebody is at
// a terminal, decline otherwise.
func chooseElicit(flag string, e *env) (elicitMode, error) {
	switch m := elicitMode(flag); m {
	case elicitDecline, elicitDefaults, elicitPrompt:
		return m, nil
	case "":
		if e.interactive() {
			return elicitPrompt, nil
		}
		return elicitDecline, nil
	}
	return "", fmt.Errorf("--elicit %s: want decline, defaults or prompt", flag)
}
