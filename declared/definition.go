//go:build unix

package declared

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
)

var _ contract.Definer = (*Tool)(nil)

// definition is a declared tool's definition, in its JSON key order.
type definition struct {
	Command    []string            `json:"command"`
	Cwd        string              `json:"cwd"`
	Env        map[string]string   `json:"env"`
	Files      map[string]string   `json:"files"`
	Network    bool                `json:"network"`
	Program    string              `json:"program"`
	Sandbox    json.RawMessage     `json:"sandbox,omitempty"`
	SideEffect contract.SideEffect `json:"side_effect"`
}

// Definition returns what an approval of the tool covers
// ([contract.Definer]), as canonical JSON:
//
//	{"command": [...], "cwd": "...", "env": {NAME: "sha256:..."},
//	 "files": {"/abs/path": "sha256:..."}, "network": false,
//	 "program": "/abs/path", "sandbox": {...}, "side_effect": "process"}
//
// command and cwd are as written in the manifest (placeholders
// unexpanded; cwd "." when none is given), as the preview's subject shows
// them; env has the SHA-256 of each value as written, never the value;
// program is the absolute path command[0] resolves to now; files has the
// SHA-256 of the content of the program and of every argument that names
// a regular file, when the file lies in the workspace after symlinks (a
// file a sandboxed command could have rewritten), or "symlink:" and the
// target for a link in the workspace to a file outside it (arguments with
// placeholders, and relative arguments under a cwd with placeholders, are
// not looked at); sandbox is the profile of the confinement ([Options.Sandbox]:
// its Profile, else its Subject), absent without one. For a call this
// tool previewed (the context's [contract.CallID], which the runtime
// sets), that is the confinement the preview got, which the call's run
// uses; otherwise the sandbox is asked.
//
// The files are hashed at every call, so a program rewritten since the
// tool was loaded no longer matches an approval of the old one. It fails
// as the preview does for an unavailable tool, a program that cannot be
// found and a sandbox that cannot confine it, and when a file in the
// workspace it would hash cannot be read.
func (t *Tool) Definition(ctx context.Context) (json.RawMessage, error) {
	if u := t.state.unavailable; u != nil {
		return nil, u
	}
	program, err := t.program()
	if err != nil {
		return nil, &refusedError{
			msg:    t.spec.Name + " cannot run: " + t.programFault(err),
			causes: []error{contract.ErrRefused, errCannotStart, err},
		}
	}
	files, err := t.workspaceFiles(ctx, program)
	if err != nil {
		return nil, err
	}
	d := definition{
		Command:    t.spec.Command,
		Cwd:        t.view.cwd,
		Env:        t.state.envDigests,
		Files:      files,
		Network:    t.spec.Network,
		Program:    program,
		SideEffect: t.spec.SideEffect,
	}
	if d.Env == nil {
		d.Env = map[string]string{}
	}
	// The confinement the preview of the call being judged got is the
	// one its run uses: the definition describes that one.
	confinement := t.state.previewed.peek(contract.CallID(ctx))
	if confinement == nil {
		if confinement, err = t.confinement(); err != nil {
			return nil, err
		}
	}
	if confinement != nil {
		d.Sandbox = confinement.Profile
		if len(d.Sandbox) == 0 {
			d.Sandbox = confinement.Subject
		}
	}
	d.SideEffect = t.sideEffect(confinement)
	return contract.CanonicalJSON(d)
}

// workspaceFiles hashes the files the command runs that lie in the
// workspace: the program, and each argument that names a regular file
// there.
func (t *Tool) workspaceFiles(ctx context.Context, program string) (map[string]string, error) {
	files := map[string]string{}
	candidates := []string{program}
	dir := t.spec.Root
	if run := t.spec.run(); run.dir != "" {
		dir = run.dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(t.spec.Root, dir)
		}
	}
	for _, arg := range t.spec.Command[1:] {
		switch {
		case arg == "" || hasPlaceholder(arg):
		case filepath.IsAbs(arg):
			candidates = append(candidates, filepath.Clean(arg))
		case !hasPlaceholder(t.spec.Cwd):
			// Under a cwd with placeholders the path would show their
			// values.
			candidates = append(candidates, filepath.Join(dir, arg))
		}
	}
	for _, path := range candidates {
		if _, done := files[path]; done {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			continue // missing: nothing runs it
		}
		if !configfile.Within(real, t.state.realRoot) {
			if configfile.Within(path, t.spec.Root) || configfile.Within(path, t.state.realRoot) {
				// A link in the workspace to a file outside: where it
				// points is what a rewrite would change.
				files[path] = symlinkPrefix + real
			}
			// Outside the workspace: nothing a sandboxed command could
			// have written.
			continue
		}
		sum, err := fileHashes.hash(ctx, path)
		var nr *configfile.NotRegularError
		switch {
		case errors.As(err, &nr), errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, &refusedError{
				msg:    t.spec.Name + " cannot be approved: " + path + " cannot be read to pin what it runs: " + configfile.Reason(err),
				causes: []error{contract.ErrRefused, err},
			}
		}
		files[path] = sum
	}
	return files, nil
}

// symlinkPrefix begins the entry of a file in the workspace that is a
// link to one outside it: the target, in place of a hash.
const symlinkPrefix = "symlink:"

// envDigests are the SHA-256 of each env value as written, by name: a
// value that changes what the program runs (NODE_OPTIONS, BASH_ENV) is
// part of what was approved, but a value may be a credential, so only its
// hash is kept.
func envDigests(v value, names []string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]string, len(names))
	for _, m := range v.Members() {
		s, ok := m.Value.Text()
		if !ok {
			continue
		}
		sum := sha256.Sum256([]byte(s))
		out[m.Key] = configfile.HashPrefix + hex.EncodeToString(sum[:])
	}
	for name := range out {
		if !containsString(names, name) {
			delete(out, name)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// realRoot is root with its symlinks resolved, for telling whether a file
// lies in the workspace; root itself when it cannot be resolved.
func realRoot(root string) string {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return root
}
