package subprocess

import (
	"os/exec"
	"slices"
	"testing"
)

// The fallback for kernels without /proc/*/task/*/children finds the same
// children as those files.
func TestChildrenByScanMatchesTheChildrenFiles(t *testing.T) {
	var cmds []*exec.Cmd
	for range 3 {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	defer func() {
		for _, cmd := range cmds {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	files, scan := children(), childrenByScan()
	slices.Sort(files)
	slices.Sort(scan)
	for _, cmd := range cmds {
		if !slices.Contains(files, cmd.Process.Pid) {
			t.Errorf("the children files miss child %d: %v", cmd.Process.Pid, files)
		}
	}
	if !slices.Equal(files, scan) {
		t.Errorf("children files list %v, the scan %v", files, scan)
	}
}
