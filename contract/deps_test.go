package contract_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestStandardLibraryOnly keeps contract the contract only: no file of the
// module (tests included) imports anything but the standard library and
// contract's own packages of shared vocabulary, so every binding and host
// can depend on it without inheriting a requirement, and it can reach v1
// first. The config-file reader, which once lived here, is the configfile
// module.
func TestStandardLibraryOnly(t *testing.T) {
	own := map[string]bool{
		"github.com/basis-go/basis/contract":          true,
		"github.com/basis-go/basis/contract/display":  true,
		"github.com/basis-go/basis/contract/childenv": true,
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") && !own[p] {
				t.Errorf("%s imports %s; contract holds the interface and its vocabulary, standard library only", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
