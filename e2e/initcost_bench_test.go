//go:build linux

package e2e_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkJSONSchemaInit alternates, run by run, a Go program that does
// nothing but link santhosh-tekuri/jsonschema/v6 with one that does
// nothing at all, and reports the median of each, their ratio ("ratio")
// and the difference ("init-µs/op"): the floor the library's initialiser
// (it compiles every draft's metaschema and vocabulary) sets under every
// `basis call`, whatever basis does. The fix is upstream: metaschemas
// compiled lazily, per draft, when a schema first needs one.
func BenchmarkJSONSchemaInit(b *testing.B) {
	dir := b.TempDir()
	empty, linked := filepath.Join(dir, "empty"), filepath.Join(dir, "jsonschema")
	for out, pkg := range map[string]string{empty: "./internal/initcost/empty", linked: "./internal/initcost/jsonschema"} {
		if err := goBuild(".", out, pkg); err != nil {
			b.Fatal(err)
		}
	}
	run := func(path string) time.Duration {
		t0 := time.Now()
		if out, err := exec.Command(path).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", path, err, out)
		}
		return time.Since(t0)
	}
	var with, without []time.Duration
	for b.Loop() {
		with = append(with, run(linked))
		without = append(without, run(empty))
	}
	mw, mo := median(with), median(without)
	b.ReportMetric(float64(mw.Microseconds()), "jsonschema-µs/op")
	b.ReportMetric(float64(mo.Microseconds()), "empty-µs/op")
	b.ReportMetric(float64((mw - mo).Microseconds()), "init-µs/op")
	b.ReportMetric(float64(mw)/float64(mo), "ratio")
}
