// Package redact is how mcpbind and its packages show what may hold a
// credential: the mark in its place, and URLs without their user info,
// query and fragment.
package redact
