// Command empty does nothing: the baseline of BenchmarkJSONSchemaInit, the
// cost of a Go program's start and exit.
package main

func main() {}
