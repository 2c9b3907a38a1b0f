package configfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// DefaultLimit is the largest configuration file [Read] accepts when the
// caller gives no limit: far above any real manifest or rules file, far
// below what would hurt.
const DefaultLimit = 16 << 20

// Sentinels for [errors.Is]. A missing file wraps [fs.ErrNotExist].
var (
	// ErrNotRegular: the path (after symlinks) is a directory, a FIFO, a
	// device, a socket — anything but a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the limit.
	ErrTooLarge = errors.New("file too large")
)

// NotRegularError is the refusal of a path that is, after symlinks, not
// a regular file. It wraps [ErrNotRegular].
type NotRegularError struct {
	// Path is the path as given.
	Path string
	// Mode is the mode of what was found there.
	Mode fs.FileMode
}

// Error returns a message such as "/repo/x.json: not a regular file (it
// is a named pipe)".
func (e *NotRegularError) Error() string {
	return e.Path + ": " + ErrNotRegular.Error() + " (it is " + e.Found() + ")"
}

// Unwrap returns [ErrNotRegular].
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Found names what is at the path, for a message: "a directory", "a
// named pipe", "a socket", "a character device", "a device".
func (e *NotRegularError) Found() string { return describeMode(e.Mode) }

// chunk is how much Read reads between looks at the context.
const chunk = 256 << 10

// Read returns the contents of the regular file at path, following
// symlinks, of at most limit bytes (0 means [DefaultLimit]). The file is
// opened with O_NONBLOCK, so a FIFO planted in its place cannot block, and
// examined on the open descriptor, so what is checked is what is read.
// Errors name no content; they are a [*NotRegularError] (wrapping
// [ErrNotRegular]) or wrap [ErrTooLarge], [fs.ErrNotExist], the operating
// system's error, or ctx's error.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	data, _, err := ReadInfo(ctx, path, limit)
	return data, err
}

// ReadInfo is [Read] that also returns what it found on the open
// descriptor, for a caller that checks the file's permissions: checking
// them with a separate stat would examine whatever is at the path then,
// not necessarily the file read.
func ReadInfo(ctx context.Context, path string, limit int64) ([]byte, fs.FileInfo, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: path, Mode: info.Mode()}
	}
	if info.Size() > limit {
		return nil, nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, info.Size(), limit)
	}
	// The size can change between Stat and the reads (a file being
	// written): the read stays bounded whatever it grows to.
	data := make([]byte, 0, info.Size())
	r := io.LimitReader(f, limit+1)
	buf := make([]byte, chunk)
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		n, err := r.Read(buf)
		data = append(data, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("%s: %w: more than %d bytes", path, ErrTooLarge, limit)
	}
	return data, info, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
