// Package configfile reads and writes the configuration files basis trusts
// — tool manifests, rules files, MCP configurations, trust records — the
// one careful way, so that no file a hostile repository plants can hang,
// bloat or fool basis.
//
// [Read] opens without blocking (a FIFO cannot stall it), requires a
// regular file after symlinks (/dev/zero is refused before a byte is
// read), bounds the size and honours cancellation. [WriteAtomic] writes
// through a symlink to its target, atomically, keeping the target's mode.
// [Parse] reads one JSON document strictly, keeping the position of every
// key and value so each problem can be reported as file:line:col (columns
// in characters) without quoting the text at fault, which may be a
// credential. [Expand] replaces the ${VAR} and ${VAR:-default}
// placeholders such files may hold, one grammar for every file, with
// errors that name the variable and never a value.
package configfile
