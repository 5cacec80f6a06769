package dgenvet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/dgen-go/dgen/dgenvet"
)

// TestOverlay runs the analyzer as gopls does, over a package loaded with
// an overlay: overlay.go is correct on disk, but its unsaved buffer has
// two more lines and a field of the wrong type. The analyzer must report
// on the buffer, at the buffer's line, and nothing about the disk.
func TestOverlay(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "dgenvet", "testdata", "src", "overlay", "overlay.go")
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buffer := strings.Replace(string(disk), "type K struct {\n\tA rt.Buffer[float32]", "// Two lines the\n// disk lacks.\ntype K struct {\n\tA rt.Buffer[int32]", 1)
	tests := []struct {
		name    string
		overlay map[string][]byte
		want    []string
	}{
		{"saved", nil, nil},
		{"unsaved buffer", map[string][]byte{path: []byte(buffer)}, []string{
			"overlay.go:14:2: kernel spec K: field A has type rt.Buffer[int32] but parameter 0 (__global float* a) of k needs rt.Buffer[float32]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: root, Tests: true, Overlay: tt.overlay}
			pkgs, err := packages.Load(cfg, "./dgenvet/testdata/src/overlay")
			if err != nil {
				t.Fatal(err)
			}
			g, err := checker.Analyze([]*analysis.Analyzer{dgenvet.Analyzer}, pkgs, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			var got []string
			for _, act := range g.Roots {
				for _, d := range act.Diagnostics {
					p := act.Package.Fset.Position(d.Pos)
					s := filepath.Base(p.Filename) + ":" + strings.Join(strings.Split(p.String(), ":")[1:], ":") + ": " + d.Message
					if !seen[s] {
						seen[s] = true
						got = append(got, s)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
