//go:build unix && !linux

package subprocess

import (
	"errors"
	"fmt"
	"syscall"
)

func becomeSubreaper() error {
	return fmt.Errorf("subprocess: reaping orphaned processes needs Linux's PR_SET_CHILD_SUBREAPER: %w", errors.ErrUnsupported)
}

// dieWithParent does nothing: only Linux lets a parent ask for its child's
// death when it dies.
func dieWithParent(*syscall.SysProcAttr) {}

// orphans is never called: sweeps need ReapOrphans.
func orphans(func(int) bool) []int { return nil }
