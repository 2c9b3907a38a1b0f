//go:build unix && !linux

package sandbox

import "os/exec"

// prepare is Prepare: only Linux reports Landlock's denials.
func (w *Watch) prepare(cmd *exec.Cmd) (start func() error, release func(), err error) {
	return w.sb.Prepare(cmd)
}
