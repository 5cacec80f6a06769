package dgenvet_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/dgen-go/dgen/dgenvet"
)

// TestAnalyzer runs the analyzer over the packages of testdata/src, each
// with the diagnostics it must report in // want comments. The module root
// is the directory, so that the packages import the runtime.
func TestAnalyzer(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wrongfield", "nearmiss", "stale", "padding"} {
		t.Run(name, func(t *testing.T) {
			analysistest.Run(t, root, dgenvet.Analyzer, "./dgenvet/testdata/src/"+name)
		})
	}
}
