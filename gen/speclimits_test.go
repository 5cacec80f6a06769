package gen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecLimits checks the min=, max= and tune= arguments of
// //dgen:specconst: each bad declaration is one diagnostic at its line,
// and a good one reaches the generated registration.
func TestSpecLimits(t *testing.T) {
	tests := []struct {
		typ, args string
		want      string // "" for no diagnostic
	}{
		{"int32", `default=16 tune=""`, "tune= lists no candidates"},
		{"int32", `default=16 tune="8,x,32"`, `tune candidate "x": not a constant of type int32`},
		{"int32", `default=16 tune="8,16,8"`, "tune candidate 8 is listed twice"},
		{"int32", `default=16 min=4 max=64 tune="2,16"`, "tune candidate 2 is below min=4"},
		{"int32", `default=16 max=64 tune="16,128"`, "tune candidate 128 is above max=64"},
		{"int32", `default=100 max=64`, "default 100 is above max=64"},
		{"int32", `min=10 max=5`, "min=10 is greater than max=5"},
		{"int32", `min=abc`, "min=abc: not a constant of type int32"},
		{"uint8", `max=300`, "max=300: 300 overflows uint8"},
		{"float32", `default=0.5 min=0 max=1 tune="0.25,0.5,1.5"`, "tune candidate 1.5 is above max=1"},
		{"int32", `default=16 min=4 max=64 tune="8, 16,32,64"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.args, func(t *testing.T) {
			dir := writePackage(t)
			src := "package p\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=src.cl\nvar P rt.Program\n\n//dgen:specconst " + tt.args + "\nvar Tile rt.SpecConst[" + tt.typ + "]\n"
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "src.cl"), []byte("__kernel void k(__global int *a) { a[0] = Tile; }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			files, err := Generate(dir)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				got := string(files[0].Content)
				if want := `Max:     "64",
		Min:     "4",
		Name:    "Tile",
		Tune:    []string{"8", "16", "32", "64"},`; !strings.Contains(got, want) {
					t.Errorf("generated file lacks %s:\n%s", want, got)
				}
				return
			}
			var ds Diagnostics
			if !errors.As(err, &ds) || len(ds) != 1 || !strings.Contains(ds[0].Msg, tt.want) || !strings.HasSuffix(ds[0].Pos.Filename, "p.go") || ds[0].Pos.Line != 8 {
				t.Errorf("Generate = %v, want one diagnostic at p.go:8 containing %q", err, tt.want)
			}
		})
	}
}
