package trampoline

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"
)

// sources are this package's own files, tests aside: what a trampoline
// does is what they say (TestSourcesAreEmbedded keeps the list whole).
//
//go:embed doc.go *_linux.go *_amd64.go *_arm64.go
var sources embed.FS

// Revision is a digest of this package's sources, [Spec.Revision] of this
// build. A trampoline refuses a request of another: the sandbox helper
// (cmd/basis-sandbox), a binary of its own, may be older than the basis
// beside it, and then it is not used ([Version] alone would let a helper
// built before a fix confine programs without the fix).
var Revision = sync.OnceValue(func() string {
	h := sha256.New()
	// WalkDir visits in lexical order: the digest does not depend on the
	// order the files were embedded in.
	err := fs.WalkDir(sources, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := sources.ReadFile(name)
		if err != nil {
			return err
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(data)
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		panic("trampoline: reading the embedded sources: " + err.Error()) // they are in the binary
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
})
