package trampoline

import (
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// The rights of a held rule are cut to what a kernel of each ABI handles,
// as go-landlock's best effort cuts a rule's: the kernel refuses a rule
// granting a right its ruleset does not handle, and a right it does not
// know.
func TestHandledAccessFS(t *testing.T) {
	for _, tc := range []struct {
		abi          int
		has, hasNot  uint64
		wantSameAsV5 bool
	}{
		{abi: 1, has: readDirs | ll.AccessFSWriteFile, hasNot: ll.AccessFSRefer | ll.AccessFSTruncate | ll.AccessFSIoctlDev},
		{abi: 2, has: ll.AccessFSRefer, hasNot: ll.AccessFSTruncate | ll.AccessFSIoctlDev},
		{abi: 3, has: ll.AccessFSTruncate, hasNot: ll.AccessFSIoctlDev},
		{abi: 4, has: ll.AccessFSTruncate, hasNot: ll.AccessFSIoctlDev},
		{abi: 5, has: ll.AccessFSIoctlDev, wantSameAsV5: true},
		{abi: 7, has: ll.AccessFSIoctlDev, wantSameAsV5: true},
		{abi: 99, has: ll.AccessFSIoctlDev, wantSameAsV5: true},
	} {
		got := handledAccessFS(tc.abi)
		if got&tc.has != tc.has || got&tc.hasNot != 0 {
			t.Errorf("ABI %d: handled %#x, want %#x set and %#x clear", tc.abi, got, tc.has, tc.hasNot)
		}
		if v5 := uint64(landlock.V5.HandledAccessFS); tc.wantSameAsV5 && got != v5 {
			t.Errorf("ABI %d: handled %#x, want V5's %#x", tc.abi, got, v5)
		}
	}
}
