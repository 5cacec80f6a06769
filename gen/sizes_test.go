package gen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetSizes generates a package whose Go struct matches OpenCL C's
// layout on 64-bit targets only (int64 is 4-aligned on 386): for GOARCH
// 386 the layout check must use 386's sizes and refuse it. (The first run
// builds the export data of the standard library for 386: minutes on a
// small machine, then cached.)
func TestTargetSizes(t *testing.T) {
	dir := writePackage(t)
	src := `package p

import "github.com/dgen-go/dgen/rt"

//dgen:program source=src.cl
var P rt.Program

type S struct {
	A int32
	B int64
}

//dgen:kernel program=P name=k
type K struct{ Ss rt.Buffer[S] }
`
	files := map[string]string{"p.go": src, "src.cl": "typedef struct { int a; long b; } s;\n__kernel void k(__global s* ss) {}\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ goarch, want string }{
		{"amd64", ""},
		{"386", "field B of S is at offset 4 but OpenCL C field b of s is at offset 8"},
	} {
		t.Run(tt.goarch, func(t *testing.T) {
			t.Setenv("GOARCH", tt.goarch)
			t.Setenv("CGO_ENABLED", "0")
			_, err := Generate(dir)
			var ds Diagnostics
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Generate = %v, want no error", err)
			case tt.want != "" && (!errors.As(err, &ds) || !strings.Contains(ds.Error(), tt.want)):
				t.Errorf("Generate = %v, want a diagnostic: %s", err, tt.want)
			}
		})
	}
}

// TestSourceTooLarge checks that a source over MaxSourceSize is refused
// before it is read (the file is sparse: it costs no disk).
func TestSourceTooLarge(t *testing.T) {
	dir := writePackage(t)
	f, err := os.Create(filepath.Join(dir, "src.cl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(5 << 30); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	_, err = Generate(dir)
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != 1 || !strings.Contains(ds[0].Msg, "cannot read source src.cl: file too large: 5368709120 bytes, more than dgen reads (8 MiB)") {
		t.Errorf("Generate = %v, want one diagnostic: file too large", err)
	}
}
