package trampoline

import (
	"os"
	"strings"
	"testing"
)

// The thread that restricts itself for a watched call bears the call's
// tag when Landlock makes its domain: the kernel's audit records of that
// domain name the thread, which is how the sandbox's Watch ties denials to
// the call (its own tests need the audit on; this one does not).
func TestRestrictNamesTheThread(t *testing.T) {
	const tag = "basis-w-test1"
	type result struct {
		comm string
		err  error
	}
	done := make(chan result, 1)
	GoOnChildlessThread(func() { // the thread is restricted for good and ends with f
		err := restrict(Spec{Version: Version, Tag: tag})
		comm, _ := os.ReadFile("/proc/thread-self/comm")
		done <- result{strings.TrimSpace(string(comm)), err}
	})
	r := <-done
	if r.err != nil {
		t.Fatalf("restrict: %v", r.err)
	}
	if r.comm != tag {
		t.Errorf("the restricted thread is named %q, want %q", r.comm, tag)
	}
}
