// Package gctarget raises the garbage collector's target for the whole
// basis process, from its start, unless the operator chose one with
// $GOGC.
//
// The target is raised in this package's init, which runs before the
// initialisers of the heavier packages basis links: every package whose
// path sorts after this one's and that this one does not import (the
// command imports it, blank, for that). santhosh-tekuri/jsonschema/v6
// compiles every draft's metaschema in its init, and with the default
// target the collector then ran during the start of every basis process
// (e2e/README, known gaps, says what that cost). basis serve raised the
// target for another reason already: go-sdk's JSON decoder makes a 32 KiB
// buffer for every message, and on serve's small heap the default target
// collected every few calls. Four times the target costs a few MiB of
// memory and stays proportional to what basis holds.
package gctarget
