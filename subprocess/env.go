//go:build unix

package subprocess

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidCmd is wrapped by every error [Run] returns for a [Cmd] that
// cannot be run as given. Such an error quotes no argument or environment
// value, only its position.
var ErrInvalidCmd = errors.New("invalid command")

// MergeEnv layers environments, outermost first: for a name set in more
// than one layer, the later layer's entry wins; within a layer, a later
// entry wins. Names keep the position of their first appearance, so the
// result is deterministic. Entries without '=' are kept as they are, for
// [Run] to refuse.
func MergeEnv(layers ...[]string) []string {
	n := 0
	for _, layer := range layers {
		n += len(layer)
	}
	// Sized once: this runs for every program started, and growing the
	// map and the slice entry by entry allocated several times over.
	index := make(map[string]int, n)
	var merged []string
	if n > 0 {
		merged = make([]string, 0, n)
	}
	for _, layer := range layers {
		for _, entry := range layer {
			name, _, _ := strings.Cut(entry, "=")
			if i, ok := index[name]; ok {
				merged[i] = entry
				continue
			}
			index[name] = len(merged)
			merged = append(merged, entry)
		}
	}
	return merged
}

// LookupEnv returns the value of name in env, the last entry winning.
func LookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// checkEnv refuses entries the kernel cannot carry. It names the entry by
// position only: a value may be a credential.
func checkEnv(env []string) error {
	for i, entry := range env {
		if strings.IndexByte(entry, 0) >= 0 {
			return fmt.Errorf("%w: environment entry %d contains a NUL byte", ErrInvalidCmd, i)
		}
		if k, _, ok := strings.Cut(entry, "="); !ok || k == "" {
			return fmt.Errorf("%w: environment entry %d is not of the form NAME=value", ErrInvalidCmd, i)
		}
	}
	return nil
}

func checkArgv(argv []string) error {
	if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return fmt.Errorf("%w: no program: Argv is empty or its first word is blank", ErrInvalidCmd)
	}
	for i, arg := range argv {
		if strings.IndexByte(arg, 0) >= 0 {
			return fmt.Errorf("%w: argument %d contains a NUL byte", ErrInvalidCmd, i)
		}
	}
	return nil
}
