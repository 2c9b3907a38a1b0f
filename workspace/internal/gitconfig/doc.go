// Package gitconfig reads a git repository's own config files — without
// running git, which would run the very programs those files can name —
// and reports the settings that make git run a program (core.fsmonitor,
// core.pager, diff drivers, ! aliases, …) or read another file.
//
// The parser follows git's own (config.c: git_parse_source, get_base_var,
// get_value, parse_value) byte for byte where it matters: what git reads
// as a variable is read as one here. Where the two could disagree, basis
// errs towards reporting more: a file it cannot parse is itself reported.
package gitconfig
