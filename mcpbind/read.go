//go:build unix

package mcpbind

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// maxConfigSize bounds a config or trust file: far above any real one,
// far below what could exhaust memory.
const maxConfigSize = 16 << 20

// readConfigFile reads a regular file (after symlinks) of at most
// maxConfigSize bytes. It opens with O_NONBLOCK, so a named pipe put in the
// file's place cannot hang basis waiting for a writer, and then checks
// what it opened with fstat, so nothing can be swapped in between a check
// and the open. It honours ctx between reads.
func readConfigFile(ctx context.Context, path string) ([]byte, error) {
	data, _, err := readConfigFileMode(ctx, path)
	return data, err
}

// readConfigFileMode is readConfigFile that also returns the file's mode.
func readConfigFileMode(ctx context.Context, path string) ([]byte, fs.FileMode, error) {
	unreadable := func(cause error, text string) error {
		return &ConfigError{File: path, Err: &problem{kind: ErrUnreadable, cause: cause, text: text}}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, unreadable(err, "was not read: "+err.Error())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, unreadable(err, "does not exist")
	}
	if err != nil {
		return nil, 0, unreadable(err, "cannot be opened: "+osReason(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, unreadable(err, "cannot be examined: "+osReason(err))
	}
	if !info.Mode().IsRegular() {
		return nil, 0, unreadable(nil, "is not a regular file; an MCP config must be one")
	}
	if info.Size() > maxConfigSize {
		return nil, 0, unreadable(nil, "is larger than "+strconv.Itoa(maxConfigSize>>20)+" MiB")
	}
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, unreadable(err, "was not read: "+err.Error())
		}
		n, err := f.Read(buf)
		data = append(data, buf[:n]...)
		if len(data) > maxConfigSize {
			return nil, 0, unreadable(nil, "is larger than "+strconv.Itoa(maxConfigSize>>20)+" MiB")
		}
		if err == io.EOF {
			return data, info.Mode(), nil
		}
		if err != nil {
			return nil, 0, unreadable(err, "cannot be read: "+osReason(err))
		}
	}
}

// osReason is the operating system's part of err, without the path it
// quotes.
func osReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
