// Package spawn is basis's native tool: the model's one route to a command
// ("!cmd") and to a subagent (any other text).
package spawn
