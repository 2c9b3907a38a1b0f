//go:build unix

package declared

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/basis-go/basis/configfile"
)

// fileHashes remembers the hashes of the files tools run, so that a large
// program is not read whole at every call. A remembered hash is used only
// for the same file (device and inode) with the same size, modification
// time and change time. The change time is what makes that safe: nobody
// but the kernel sets it, and it moves on every write (and every utimes),
// so a file rewritten since it was hashed no longer looks the same. A
// hash is remembered only when the file's change time was already well in
// the past when hashing began (racyWindow): a write in the same tick of
// the clock as the change time remembered could otherwise leave it
// unmoved ("racy git"). Where the change time cannot be read, nothing is
// remembered.
var fileHashes = &hashCache{now: time.Now}

// racyWindow is how far in the past a file's change time must be for its
// hash to be remembered: far above any filesystem's timestamp tick.
const racyWindow = 2 * time.Second

// maxHashes bounds the cache: when full, it starts again.
const maxHashes = 4096

type hashCache struct {
	mu   sync.Mutex
	sums map[fileKey]string
	now  func() time.Time
}

// fileKey is what identifies one version of one file.
type fileKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

// hash returns "sha256:" and the hex SHA-256 of the regular file at path,
// as [configfile.HashFile] does, remembered as the type says.
func (c *hashCache) hash(ctx context.Context, path string) (string, error) {
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
		return "", &configfile.NotRegularError{Path: path, Mode: info.Mode()}
	}
	key, keyed := keyOf(info)
	if keyed {
		c.mu.Lock()
		sum, ok := c.sums[key]
		c.mu.Unlock()
		if ok {
			return sum, nil
		}
	}
	began := c.now()
	sum, err := configfile.Hash(ctx, f)
	if err != nil {
		return "", err
	}
	if !keyed || time.Unix(0, key.ctime).After(began.Add(-racyWindow)) {
		return sum, nil
	}
	// A file changed while it was read is not the version the key names.
	if after, err := f.Stat(); err != nil {
		return sum, nil
	} else if k, ok := keyOf(after); !ok || k != key {
		return sum, nil
	}
	c.mu.Lock()
	if c.sums == nil || len(c.sums) >= maxHashes {
		c.sums = make(map[fileKey]string)
	}
	c.sums[key] = sum
	c.mu.Unlock()
	return sum, nil
}
