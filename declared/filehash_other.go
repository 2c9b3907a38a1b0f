//go:build unix && !linux

package declared

import "os"

// keyOf gives no key: without a change time read the same way on every
// system, no hash is remembered and every file is read at every call.
func keyOf(os.FileInfo) (fileKey, bool) { return fileKey{}, false }
