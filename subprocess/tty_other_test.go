//go:build unix && !linux

package subprocess_test

// tiocsti is the terminal test's helper, which runs on Linux only.
func tiocsti() int { return 2 }
