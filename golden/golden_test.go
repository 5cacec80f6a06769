// Package golden holds dgen's golden tests: input packages under
// testdata/src, with the expected generated files beside them (so that they
// compile as part of the package) and, for bad input, the expected
// diagnostics in diagnostics.txt. go test ./golden -update rewrites them.
package golden

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/dgen-go/dgen/gen"
)

var update = flag.Bool("update", false, "rewrite the expected files")

// needSource skips tb where the test binary runs outside dgen's source
// tree (the GPU bundle, say): the golden packages under testdata/src and
// the go command that go/packages runs are both needed.
func needSource(tb testing.TB) {
	tb.Helper()
	if st, err := os.Stat(filepath.Join("testdata", "src")); err != nil || !st.IsDir() {
		tb.Skip("no testdata/src beside the test binary: the golden tests run in the source tree (go test ./golden)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("no go command: go/packages needs one to load the golden packages")
	}
}

func TestGolden(t *testing.T) {
	needSource(t)
	cases, err := filepath.Glob("testdata/src/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, err := gen.Generate(dir)
			diagPath := filepath.Join(dir, "diagnostics.txt")
			var ds gen.Diagnostics
			if errors.As(err, &ds) {
				got := ds.Error() + "\n"
				if *update {
					os.WriteFile(diagPath, []byte(got), 0o644)
				}
				want, rerr := os.ReadFile(diagPath)
				if rerr != nil {
					t.Fatalf("unexpected diagnostics:\n%s", got)
				}
				if got != string(want) {
					t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := gen.Write(dir, files); err != nil {
					t.Fatal(err)
				}
			}
			existing, _ := filepath.Glob(filepath.Join(dir, "zz_generated*"))
			if len(existing) != len(files) {
				t.Errorf("generated %d files, %d expected", len(files), len(existing))
			}
			for _, f := range files {
				want, err := os.ReadFile(filepath.Join(dir, f.Name))
				if err != nil {
					t.Fatalf("generated %s: %v", f.Name, err)
				}
				if string(want) != string(f.Content) {
					t.Errorf("%s differs from the golden file:\n%s", f.Name, f.Content)
				}
			}
			// Determinism: a second run gives the same bytes.
			again, err := gen.Generate(dir)
			if err != nil || len(again) != len(files) {
				t.Fatalf("second run: %v", err)
			}
			for i := range files {
				if string(again[i].Content) != string(files[i].Content) {
					t.Errorf("%s: second run differs", files[i].Name)
				}
			}
			// Every golden output compiles with its package and tests.
			cfg := &packages.Config{Mode: packages.NeedTypes | packages.NeedName, Dir: dir, Tests: true}
			pkgs, err := packages.Load(cfg, ".")
			if err != nil {
				t.Fatal(err)
			}
			packages.Visit(pkgs, nil, func(p *packages.Package) {
				for _, e := range p.Errors {
					if !strings.Contains(e.Msg, "declared and not used") {
						t.Errorf("%s: %v", p.ID, e)
					}
				}
			})
		})
	}
}
