//go:build basis_testinterval

package main

import "time"

// The tests build basis with -tags basis_testinterval: it looks at its
// config files every few milliseconds, so a test that edits one is not
// paced by the second a person's edit can wait.
func init() { reloadInterval = 5 * time.Millisecond }
