//go:build unix

package approver

import (
	"path"
	"slices"
	"strings"
)

// Why a program's "always" proposal is its exact command line: a rule
// such as find * would allow whatever the program can be made to run or
// destroy later, unasked (find . -exec sh -c '…' \;).
const (
	// exactRunsPrograms: the program runs another program, or code, that
	// its arguments (or its configuration) name.
	exactRunsPrograms = "it runs programs or code its arguments name"
	// exactDestroys: the program removes, overwrites or re-permissions
	// data, and any of its uses can be widened to all of it.
	exactDestroys = "it destroys or overwrites data"
	// exactGit: git runs hooks, aliases, pagers, diff and merge drivers
	// and filters from the repository's own config, and options such as
	// --upload-pack, --exec and -c name programs on any subcommand.
	exactGit = "git runs programs named by its options and by the repository's config"
)

// exactPrograms are the programs whose every "always" proposal is the
// exact command line, by name ([programName]), with why. The list is
// documented in the README ("Proposed rules"); keep the two together.
var exactPrograms = func() map[string]string {
	m := map[string]string{}
	add := func(why string, names ...string) {
		for _, n := range names {
			m[strings.ToLower(n)] = why
		}
	}
	// Run the command given in their arguments.
	add(exactRunsPrograms,
		"env", "xargs", "find", "parallel", "nice", "nohup", "timeout", "time", "command", "exec", "builtin", "eval",
		"stdbuf", "setsid", "chroot", "unshare", "nsenter", "flock", "watch", "entr", "chrt", "taskset", "ionice",
		"setpriv", "capsh", "prlimit", "runuser", "script", "sudo", "doas", "su", "run0", "pkexec",
		"systemd-run", "at", "batch", "crontab", "firejail", "bwrap", "proot", "fakeroot", "fakechroot",
		"strace", "ltrace", "valgrind", "gdb", "lldb", "perf", "xvfb-run", "dbus-run-session", "ssh-agent",
		"tmux", "screen", "xdg-open", "open", "busybox", "toybox")
	// Shells and interpreters: their arguments are code.
	add(exactRunsPrograms,
		"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "pdksh", "oksh", "yash", "ash", "csh", "tcsh", "rc",
		"elvish", "nu", "xonsh", "pwsh",
		"python", "pypy", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun", "bunx", "php", "lua", "luajit",
		"tclsh", "wish", "expect", "Rscript", "R", "julia", "osascript", "jshell", "guile", "racket", "sbcl",
		"awk", "gawk", "mawk", "nawk", "sed", "gsed", "m4")
	// Build tools that run what their arguments or files say (make
	// --eval, SHELL=…; cmake -P, -E), and runners of packages fetched
	// on the spot.
	add(exactRunsPrograms, "make", "gmake", "bmake", "cmake", "npx", "pnpx", "uvx")
	// Programs with options that name a program to run: tar
	// --to-command and -I, sort --compress-program, zip -TT, rsync -e,
	// scp -S and ssh's ProxyCommand, patch's ed scripts, less and more
	// with !, vi and emacs with their own commands, man -P.
	add(exactRunsPrograms, "tar", "gtar", "bsdtar", "sort", "zip", "rsync", "ssh", "scp", "sftp", "patch",
		"less", "more", "most", "man", "vi", "vim", "nvim", "view", "ex", "ed", "emacs", "nano")
	// Container runtimes run programs, often as root.
	add(exactRunsPrograms, "docker", "podman", "nerdctl")
	add(exactGit, "git")
	add(exactDestroys,
		"rm", "unlink", "shred", "srm", "wipe", "dd", "truncate", "mv", "wipefs", "mkswap", "mke2fs",
		"fdisk", "sfdisk", "gdisk", "sgdisk", "parted", "blkdiscard", "chmod", "chown", "chgrp", "chattr", "setfacl")
	return m
}()

// exactSubcommands are programs that keep the narrow proposal (program,
// subcommand, *) except for the subcommands listed, which run a package,
// a command or code their arguments name.
var exactSubcommands = map[string][]string{
	"go":      {"run", "tool", "generate"},
	"npm":     {"exec", "x", "explore", "run-script", "rebuild"},
	"pnpm":    {"dlx", "exec", "x", "create"},
	"yarn":    {"dlx", "exec", "node"},
	"uv":      {"run", "tool"},
	"pipx":    {"run"},
	"poetry":  {"run"},
	"pdm":     {"run"},
	"hatch":   {"run"},
	"cargo":   {"run", "install"},
	"kubectl": {"exec", "run", "debug", "attach", "cp"},
	"gh":      {"extension", "alias"},
}

// programName is how a command's program is looked up in the list of
// programs proposed exactly: the last element of argv0 (/usr/bin/find is
// find), with a version after the name taken off (python3.12, python3,
// perl5.36, lua5.4, node20 and python-3.12 are python, perl, lua and
// node). Any mkfs variant (mkfs.ext4) is mkfs. The name keeps its case;
// the look-up folds ASCII case, because on a case-insensitive file system
// (macOS, by default) FIND runs find.
func programName(argv0 string) string {
	name := path.Base(strings.TrimRight(argv0, "/"))
	if name == "/" || name == "." {
		return name
	}
	if strings.HasPrefix(strings.ToLower(name), "mkfs") {
		return "mkfs"
	}
	return stripVersion(name)
}

// stripVersion takes a trailing version off a program name: digits and
// dots, after the name or after a '-'. A name that is all version stays.
func stripVersion(name string) string {
	end := len(name)
	for end > 0 && (name[end-1] >= '0' && name[end-1] <= '9' || name[end-1] == '.') {
		end--
	}
	if end == len(name) || end == 0 || name[end] == '.' {
		// No version, all version, or a dot first (a file name such as
		// run.3 is not a version).
		return name
	}
	if name[end-1] == '-' && end > 1 {
		end--
	}
	return name[:end]
}

// exactReason says why an "always" answer about argv, one simple command,
// proposes only the exact command line — [exactRunsPrograms],
// [exactDestroys] or [exactGit] — or returns "" when [proposeCommand] may
// widen it to the program, its subcommand and *.
func exactReason(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	name := strings.ToLower(programName(argv[0]))
	if name == "mkfs" {
		return exactDestroys
	}
	if why, ok := exactPrograms[name]; ok {
		return why
	}
	if subs, ok := exactSubcommands[name]; ok && len(argv) > 1 {
		// With no subcommand second (go -C dir run), the narrow
		// proposal would be go *, which covers the listed ones too.
		if slices.Contains(subs, argv[1]) || !looksLikeSubcommand(argv[1]) {
			return exactRunsPrograms
		}
	}
	return ""
}
