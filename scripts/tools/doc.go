// Package tools holds no code: its module pins the developer tools the
// Makefile runs (`go tool staticcheck`), apart from the repository's
// workspace so that their dependencies never move the versions basis's
// modules are built and tested with.
package tools
