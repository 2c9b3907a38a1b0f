// Package examples holds the programs behind the example workspace's
// declared tools (examples/workspace/.basis/tools.json). Each reads one
// JSON object from stdin — the input the model filled in — and prints its
// answer on stdout; `make demo` builds them into
// examples/workspace/.basis/bin.
package examples
