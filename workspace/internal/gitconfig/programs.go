package gitconfig

import (
	"strconv"
	"strings"
)

// What a setting does, as a finding says it.
const (
	// RunsProgram: git runs the program the value names.
	RunsProgram = "names a program git runs"
	// Includes: git reads another config file, whose settings count as
	// this one's.
	Includes = "makes git read another config file"
)

// keysRun are the variables (section.name, or section.*.name for any
// subsection) whose value git runs as a program or a shell command.
// Keep the list in cmd/basis's README ("git's own config") in step.
var keysRun = map[string]bool{
	"core.fsmonitor":             true, // a hook program; true/false is git's own daemon
	"core.hookspath":             true, // hooks from another directory
	"core.pager":                 true,
	"core.editor":                true,
	"core.sshcommand":            true,
	"core.askpass":               true,
	"core.gitproxy":              true,
	"core.alternaterefscommand":  true,
	"sequence.editor":            true,
	"diff.external":              true,
	"diff.*.command":             true,
	"diff.*.textconv":            true,
	"merge.*.driver":             true,
	"filter.*.clean":             true,
	"filter.*.smudge":            true,
	"filter.*.process":           true,
	"difftool.*.cmd":             true,
	"mergetool.*.cmd":            true,
	"credential.helper":          true,
	"credential.*.helper":        true,
	"gpg.program":                true,
	"gpg.*.program":              true,
	"gpg.*.defaultkeycommand":    true,
	"remote.*.uploadpack":        true,
	"remote.*.receivepack":       true,
	"interactive.difffilter":     true,
	"sendemail.sendmailcmd":      true,
	"sendemail.tocmd":            true,
	"sendemail.cccmd":            true,
	"sendemail.smtpserver":       true, // an absolute path is a program
	"browser.*.cmd":              true,
	"browser.*.path":             true,
	"man.*.cmd":                  true,
	"man.*.path":                 true,
	"trailer.*.command":          true,
	"trailer.*.cmd":              true,
	"hook.*.command":             true,
	"uploadpack.packobjectshook": true,
	"protocol.*.allow":           true, // protocol.ext.allow: ext:: URLs are commands
	"protocol.allow":             true,
	"submodule.*.update":         true, // only a value starting with '!'
	"alias.*":                    true, // only a value starting with '!'
	"pager.*":                    true, // pager.<command>: a program unless a boolean
}

// pattern is how e is looked up in keysRun: section.name, or
// section.*.name when it has a subsection. alias and pager name the
// command in the variable's name, so any of theirs is section.*.
func pattern(e Entry) string {
	switch e.Section {
	case "alias", "pager":
		if e.Subsection == "" {
			return e.Section + ".*"
		}
	}
	if e.Subsection != "" {
		return e.Section + ".*." + e.Name
	}
	return e.Section + "." + e.Name
}

// What says what e makes git do that a person approving a git command
// should know — [RunsProgram] or [Includes] — or "" for a setting that
// names no program. It judges the value only as far as git does: a
// boolean core.fsmonitor or pager.<cmd>, an alias without '!', an empty
// value or none at all name no program.
func What(e Entry) string {
	p := pattern(e)
	if e.Section == "include" && e.Subsection == "" && e.Name == "path" ||
		e.Section == "includeif" && e.Subsection != "" && e.Name == "path" {
		return Includes
	}
	if !keysRun[p] || e.NoValue || e.Value == "" {
		return ""
	}
	switch p {
	case "core.fsmonitor", "pager.*":
		if isBool(e.Value) {
			return ""
		}
	case "alias.*", "submodule.*.update":
		if !strings.HasPrefix(e.Value, "!") {
			return ""
		}
	case "protocol.*.allow":
		if e.Subsection != "ext" || strings.EqualFold(e.Value, "never") {
			return ""
		}
	case "protocol.allow":
		if !strings.EqualFold(e.Value, "always") {
			return ""
		}
	case "sendemail.smtpserver":
		if !strings.HasPrefix(e.Value, "/") {
			return ""
		}
	}
	return RunsProgram
}

// isBool is git's git_config_maybe_bool for a value that is present:
// true/yes/on, false/no/off (any case), or an integer.
func isBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "false", "no", "off":
		return true
	}
	s := strings.TrimRight(v, "kKmMgG")
	if len(v)-len(s) > 1 {
		return false
	}
	_, err := strconv.ParseInt(s, 0, 64)
	return err == nil
}
