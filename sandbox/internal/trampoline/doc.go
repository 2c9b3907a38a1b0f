// Package trampoline is what runs in the sandbox's re-execution of the
// running binary (argv[0] [Name]): it finishes the namespaces the process
// was cloned into, restricts it and executes the program, from this
// package's init. It also confines the restricted thread a privileged
// process starts a program from (see [ConfineThread]).
//
// Go initialises a package once every package it imports is, taking at
// each step the first in import-path order whose imports are done: this
// package imports only what confinement needs, and nothing whose
// initialisation comes late in that order (path/filepath, os/exec, net,
// ...), so the dispatch runs as soon as golang.org/x/sys/unix and
// go-landlock are initialised, before most of a host's initialisers. The
// sandbox package's tests hold it to that.
package trampoline
