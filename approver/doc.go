// Package approver decides whether a call may run: remembered rules, an
// Approver seam, and a gate that fails closed.
package approver
