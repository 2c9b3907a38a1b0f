package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// An unprivileged process learns whether the trampoline can make its
// namespaces by starting it once (probeTrampoline): an exec of this
// binary, a fifth of an unprivileged `basis call`
// (BenchmarkBasisCallUnprivileged in e2e: its over-probing), at every
// process start. A success is remembered across processes, in a file under the
// user's cache directory named by a digest of what could change the
// answer while this binary stays the same (rememberedProbe).
//
// Only a success is remembered, and only the strongest confinement
// follows from one: namespaces, never less. A file someone else put
// there can make a process try them where they do not work; its
// trampoline then fails before the program runs (ExitNotConfined), and
// that exit forgets the file (forgetProbeAfter). No file can make a
// process settle for a weaker confinement, which only a probe that ran
// and failed decides.

// probeKeyFiles are read into the key: the kernel's boot, the limits and
// switches on user namespaces (Debian's, Ubuntu's AppArmor restriction),
// this process's namespaces (a container is another answer) and its
// seccomp and no_new_privs state, which the trampoline inherits.
var probeKeyFiles = []string{
	"/proc/sys/kernel/random/boot_id",
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/user/max_net_namespaces",
	"/proc/sys/user/max_pid_namespaces",
	"/proc/sys/user/max_mnt_namespaces",
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
}

// probeKeyLinks are the namespaces the key names, by their links.
var probeKeyLinks = []string{"/proc/self/ns/user", "/proc/self/ns/pid", "/proc/self/ns/net", "/proc/self/ns/mnt"}

// How probeKey reads the files and links it names; tests replace them.
var (
	readProbeFile = os.ReadFile
	readProbeLink = os.Readlink
)

// probeKey is the digest a remembered probe goes by, "" when what it
// needs cannot be read (nothing is remembered then). hp is the sandbox
// helper, if any: another helper, or this one changed, is probed again.
func probeKey(hp *helper) string {
	h := sha256.New() // each part followed by a NUL
	exe, err := os.Stat("/proc/self/exe")
	if err != nil {
		return ""
	}
	st, ok := exe.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	for _, n := range []int64{int64(specVersion), int64(os.Geteuid()), int64(os.Getegid()),
		int64(st.Dev), int64(st.Ino), st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec} {
		h.Write(strconv.AppendInt(nil, n, 10))
		h.Write([]byte{0})
	}
	h.Write(hp.key())
	h.Write([]byte{0})
	for _, f := range probeKeyFiles {
		data, err := readProbeFile(f)
		if err != nil {
			data = []byte("-") // absent here: part of the answer too
		}
		h.Write(data)
		h.Write([]byte{0})
	}
	for _, l := range probeKeyLinks {
		target, err := readProbeLink(l)
		if err != nil {
			return ""
		}
		h.Write([]byte(target))
		h.Write([]byte{0})
	}
	status, err := readProbeFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(status)) {
		if strings.HasPrefix(line, "Seccomp") || strings.HasPrefix(line, "NoNewPrivs:") {
			h.Write([]byte(line))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// probeCacheDir is where remembered probes are: <user cache
// dir>/basis/probe, beside the workspaces' caches, not in one.
func probeCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(dir, "basis", "probe")
}

// probeResult is what a successful probe found.
type probeResult struct {
	// userns: the namespaces needed a user namespace.
	userns bool
	// helper: the sandbox helper made them, not the running binary.
	helper bool
}

// probeRecords are the contents of a record, by what it remembers.
var probeRecords = map[string]probeResult{
	"userns":           {userns: true},
	"no-userns":        {},
	"userns helper":    {userns: true, helper: true},
	"no-userns helper": {helper: true},
}

// rememberedProbe reports whether a probe with key succeeded before, and
// what it found: the file is a regular file of this user's, not a link,
// holding one of probeRecords.
func rememberedProbe(dir, key string) (r probeResult, ok bool) {
	if dir == "" || key == "" {
		return r, false
	}
	f, err := os.OpenFile(filepath.Join(dir, key), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return r, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return r, false
	}
	if st, isStat := fi.Sys().(*syscall.Stat_t); !isStat || int(st.Uid) != os.Geteuid() {
		return r, false
	}
	buf := make([]byte, 32)
	n, _ := f.Read(buf)
	r, ok = probeRecords[string(buf[:n])]
	return r, ok
}

// rememberProbe records a successful probe under key, and removes the
// records of other keys (an earlier boot or build): they would never be
// read again. Only what is a record is removed — a name of the key's
// form, a regular file of a record's content — whatever the directory
// turns out to be: a program that may write the user's cache directory
// (one sandboxed in the home directory) could have made it a link to
// another. Failures are ignored: the next process probes again.
func rememberProbe(dir, key string, r probeResult) {
	if dir == "" || key == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if e.Name() == key || !isProbeKey(e.Name()) {
				continue
			}
			if _, ok := rememberedProbe(dir, e.Name()); ok {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	var content string
	for c, of := range probeRecords {
		if of == r {
			content = c
		}
	}
	tmp, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(content)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), filepath.Join(dir, key)) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// isProbeKey reports whether name has the form of a key: 32 lower-case
// hexadecimal digits.
func isProbeKey(name string) bool {
	if len(name) != 32 {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// forgetProbeAfter forgets the remembered probe this process went by
// when a program started through the trampoline exited with
// ExitNotConfined: its namespaces may not work here any more. The program
// itself may exit so too; the next process then probes once more.
func forgetProbeAfter(state *os.ProcessState) {
	if state == nil || state.ExitCode() != ExitNotConfined {
		return
	}
	dir, key := probeCacheDir(), usedProbeKey.Load()
	if key == nil {
		return
	}
	if _, ok := rememberedProbe(dir, *key); ok { // a record, not whatever else has its name
		_ = os.Remove(filepath.Join(dir, *key))
	}
}
