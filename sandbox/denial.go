//go:build unix

package sandbox

import (
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/basis-go/basis/contract/display"
)

// MaxDenials is how many distinct denials a [Watch] keeps: a refusal
// line names a few, not everything a program tried.
const MaxDenials = 3

// Denial is one access the kernel reports Landlock refused a program
// (Linux 6.15 or later, where the operator turned the audit subsystem on:
// an AUDIT_LANDLOCK_ACCESS record). What it names was chosen by the
// program: show it with [Denial.String], which escapes it.
type Denial struct {
	// Blockers are Landlock's names of the refused rights, as the kernel
	// wrote them: "fs.write_file", "fs.make_reg", "net.connect_tcp",
	// "scope.signal" and the like.
	Blockers []string
	// Path is the file refused or, for a file to be created, removed or
	// renamed, the directory it is in (the kernel names no more); "" for
	// the network and scopes.
	Path string
	// Address is host:port of a refused TCP connect or bind.
	Address string
}

// String says in a few words what was refused, e.g. "writing /x/y.lock"
// or "creating a file in /root", with the path escaped for a terminal
// ([display.Escape]): a program may name a file with escape sequences or
// newlines to mislead whoever reads the line.
func (d Denial) String() string {
	what, obj := "", display.Escape(d.Path)
	if d.Address != "" {
		obj = display.Escape(d.Address)
	}
	first := ""
	if len(d.Blockers) > 0 {
		first = d.Blockers[0]
	}
	switch first {
	case "fs.write_file":
		what = "writing"
	case "fs.truncate":
		what = "truncating"
	case "fs.read_file":
		what = "reading"
	case "fs.read_dir":
		what = "listing"
	case "fs.execute":
		what = "executing"
	case "fs.make_reg":
		what = "creating a file in"
	case "fs.make_dir":
		what = "creating a directory in"
	case "fs.make_sym":
		what = "creating a symbolic link in"
	case "fs.make_sock", "fs.make_fifo", "fs.make_char", "fs.make_block":
		what = "creating a special file in"
	case "fs.remove_file":
		what = "removing a file in"
	case "fs.remove_dir":
		what = "removing a directory in"
	case "fs.refer":
		what = "moving or linking across"
	case "fs.ioctl_dev":
		what = "controlling the device"
	case "net.connect_tcp":
		what = "connecting to"
	case "net.bind_tcp":
		what = "listening on"
	case "scope.signal":
		return "signalling a process outside the sandbox"
	case "scope.abstract_unix_socket":
		return "connecting to an abstract Unix socket outside the sandbox"
	default:
		what = display.Escape(strings.Join(d.Blockers, ","))
		if what == "" {
			what = "an access"
		}
		if obj != "" {
			what += " on"
		}
	}
	if obj == "" {
		return what
	}
	return what + " " + obj
}

// A Watch confines one call's program as its [Sandbox] does and, where
// the kernel reports what Landlock refuses (Linux 6.15 or later with the
// audit subsystem on, and this process allowed to read it:
// CAP_AUDIT_READ), records what it refused that program. basis never
// turns audit on itself. Elsewhere a Watch is its Sandbox's Prepare and
// reports nothing, at no cost beyond one cached check and, for a process
// that may read the audit, one query of its state per call.
//
// Only the records of the call's own Landlock domain are taken — a domain
// the kernel says was made by this process, or by the call's own
// process, under a name given to this call alone — never those of
// another call or another process. A program's own further restrictions
// of itself count as its call's.
//
// A Watch is for one program: make one per call with [Sandbox.Watch].
type Watch struct {
	sb *Sandbox

	mu      sync.Mutex
	denials []Denial
	more    int
}

// Watch returns a Watch for one call of the sandbox's program.
func (s *Sandbox) Watch() *Watch { return &Watch{sb: s} }

// Prepare is [Sandbox.Prepare] that also listens, while the program
// runs, for what the kernel refuses it. release (call it once the
// program has been waited for, as for Prepare) collects what was
// refused when the program failed: it then waits until the kernel has
// delivered every record of the program's run, a few milliseconds, at
// most two seconds. It has the signature of subprocess.Cmd's Confine.
func (w *Watch) Prepare(cmd *exec.Cmd) (start func() error, release func(), err error) {
	return w.prepare(cmd)
}

// Denials returns, once release has returned, what the kernel reported
// it refused the program, at most [MaxDenials] distinct ones in the order
// they happened, and how many other refusals it reported. None where the
// kernel reports nothing, this process may not read it, or the program
// succeeded.
func (w *Watch) Denials() (denials []Denial, more int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Denial(nil), w.denials...), w.more
}

// add records d unless it is one already kept.
func (w *Watch) add(d Denial) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.denials {
		if k.String() == d.String() {
			return
		}
	}
	if len(w.denials) < MaxDenials {
		w.denials = append(w.denials, d)
		return
	}
	w.more++
}

// auditRecord is one audit record: its fields in order, values unquoted
// and, where the kernel wrote an untrusted string in hex, decoded.
type auditRecord map[string]string

// untrustedFields are the fields the kernel writes with
// audit_log_untrustedstring: quoted when plain, in hex otherwise.
var untrustedFields = map[string]bool{"path": true, "name": true, "comm": true, "exe": true}

// parseAuditRecord parses the text of an audit record, as a multicast
// listener reads it: "audit(SECONDS.MS:SERIAL): key=value key=value ...".
func parseAuditRecord(text string) auditRecord {
	if _, rest, ok := strings.Cut(text, "): "); ok && strings.HasPrefix(text, "audit(") {
		text = rest
	}
	rec := auditRecord{}
	for text != "" {
		text = strings.TrimLeft(text, " ")
		key, rest, ok := strings.Cut(text, "=")
		if !ok || key == "" || strings.ContainsAny(key, " \"") {
			break
		}
		var value string
		quoted := strings.HasPrefix(rest, `"`)
		if quoted {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			value, text = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			value, text = rest[:end], rest[end:]
			if untrustedFields[key] && value != "(null)" && value != "?" {
				if raw, err := hex.DecodeString(value); err == nil {
					value = string(raw)
				}
			}
		}
		if _, dup := rec[key]; !dup {
			rec[key] = value
		}
	}
	return rec
}

// denialOf is the Denial of a Landlock access record.
func denialOf(rec auditRecord) Denial {
	d := Denial{Path: rec["path"]}
	if b := rec["blockers"]; b != "" {
		d.Blockers = strings.Split(b, ",")
	}
	if name := rec["name"]; name != "" {
		if d.Path == "" {
			d.Path = name
		} else {
			d.Path = filepath.Join(d.Path, name)
		}
	}
	switch {
	case rec["daddr"] != "" && rec["dest"] != "":
		d.Address = joinHostPort(rec["daddr"], rec["dest"])
	case rec["saddr"] != "" && rec["src"] != "":
		d.Address = joinHostPort(rec["saddr"], rec["src"])
	case rec["dest"] != "":
		d.Address = "port " + rec["dest"]
	case rec["src"] != "":
		d.Address = "port " + rec["src"]
	}
	return d
}

// joinHostPort is net.JoinHostPort (an IPv6 address in brackets), without
// importing net: the sandbox's trampoline runs in this package's init,
// which waits for every package it imports, and net, late in Go's
// initialisation order, held it back by a millisecond in the basis binary.
func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
