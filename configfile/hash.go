package configfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
	"syscall"
)

// HashPrefix begins every digest [HashFile] returns.
const HashPrefix = "sha256:"

// HashFile returns "sha256:" and the hex SHA-256 of the regular file at
// path, following symlinks: what an approval or a trust record pins of a
// file a tool runs, so that a rewritten file no longer matches. It opens
// the file without blocking (a FIFO put in its place cannot stall it),
// hashes the file it opened (a *[NotRegularError] for anything but a
// regular file), has no size bound — a program is as large as it is — and
// stops when ctx is done.
func HashFile(ctx context.Context, path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", &NotRegularError{Path: path, Mode: info.Mode()}
	}
	return Hash(ctx, f)
}

// hashBuffers are the buffers content is hashed through: a call must not
// allocate a large buffer each time it pins a file.
var hashBuffers = sync.Pool{New: func() any { b := make([]byte, chunk); return &b }}

// Hash returns "sha256:" and the hex SHA-256 of what r holds, read to its
// end, stopping when ctx is done: the digest [HashFile] gives, for a
// caller that opened and checked the file itself.
func Hash(ctx context.Context, r io.Reader) (string, error) {
	h := sha256.New()
	bp := hashBuffers.Get().(*[]byte)
	defer hashBuffers.Put(bp)
	buf := *bp
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := r.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return HashPrefix + hex.EncodeToString(h.Sum(nil)), nil
}
