package configfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks bounds how many symlinks WriteAtomic follows.
const maxLinks = 40

// Target returns the file a write to path lands on: path itself, or the
// end of its chain of symlinks (which need not exist yet). A dotfile kept
// as a link into a repository of dotfiles stays a link.
func Target(path string) (string, error) {
	for range maxLinks {
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// WriteAtomic replaces the file at path — or, when path is a symlink, the
// file it points to — with data: a temporary file beside the target,
// synced, renamed over it, then the directory synced, so a crash leaves
// the old file or the new one, never a mixture. An existing target keeps
// its permission bits; a new one gets mode. The target must be a regular
// file when it exists.
func WriteAtomic(path string, data []byte, mode fs.FileMode) error {
	target, err := Target(path)
	if err != nil {
		return err
	}
	if info, err := os.Stat(target); err == nil {
		if !info.Mode().IsRegular() {
			return &NotRegularError{Path: target, Mode: info.Mode()}
		}
		mode = info.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	for _, step := range []func() error{
		func() error { _, err := tmp.Write(data); return err },
		func() error { return tmp.Chmod(mode) },
		tmp.Sync,
	} {
		if err := step(); err != nil {
			tmp.Close()
			return fmt.Errorf("writing %s: %w", target, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: the rename is already visible
		d.Close()
	}
	return nil
}
