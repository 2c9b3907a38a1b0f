// Command basis-sandbox is the sandbox's helper: a program that runs
// nothing by itself, which an unprivileged basis (or a host that embeds
// the sandbox package) starts instead of re-executing itself to make a
// call's namespaces, confine the call and execute its program. It is a
// small binary, so a confined start costs its start instead of the whole
// host's.
//
// Install it beside the basis binary, from the same version:
//
//	CGO_ENABLED=0 go install github.com/basis-go/basis/sandbox/cmd/basis-sandbox@VERSION
//
// (a static build starts fastest). basis uses it only when it is a
// regular file of the owner of basis (or root) that no one else may
// write, in a directory that no one else may write either, of the same
// build of the sandbox (a digest of its sources), and not writable by the
// call; otherwise basis re-executes itself, as it does without one. The
// sandbox package's documentation (HelperName) says more.
package main
