package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen"
)

// writeBenchPackage writes a package with n globals and 100 kernels, each
// kernel using one global, into a temporary directory inside the module.
func writeBenchPackage(b *testing.B, n int) string {
	dir, err := os.MkdirTemp("testdata", "bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	var g, cl strings.Builder
	g.WriteString("package bench\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=b.cl\nvar P rt.Program\n\n")
	for i := range n {
		fmt.Fprintf(&g, "//dgen:global\nvar G%d rt.DeviceGlobal[float32]\n\n", i)
	}
	for i := range 100 {
		fmt.Fprintf(&g, "//dgen:kernel program=P name=k%d\ntype K%d struct {\n\tA rt.Buffer[float32]\n\tN int32\n}\n\n", i, i)
		fmt.Fprintf(&cl, "__kernel void k%d(__global float* a, int n) { a[n] = G%d; }\n", i, i%n)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte(g.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.cl"), []byte(cl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkGenerate times one dgen run (load, check, emit) over packages
// with 50 to 500 device globals and 100 kernels.
func BenchmarkGenerate(b *testing.B) {
	needSource(b)
	for _, n := range []int{50, 100, 250, 500} {
		b.Run(fmt.Sprintf("globals=%d", n), func(b *testing.B) {
			dir := writeBenchPackage(b, n)
			for b.Loop() {
				if _, err := gen.Generate(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// writeLargePackage writes a package whose one program source is about
// size bytes: blocks of a macro, a typedef, a helper that reads the device
// global Bias and a kernel calling it; ten of the kernels have specs.
func writeLargePackage(b *testing.B, size int) string {
	dir, err := os.MkdirTemp("testdata", "bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	var g, cl strings.Builder
	g.WriteString("package bench\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:global\nvar Bias rt.DeviceGlobal[float32]\n\n//dgen:program source=large.cl\nvar P rt.Program\n\n")
	for i := range 10 {
		fmt.Fprintf(&g, "//dgen:kernel program=P name=k_%d\ntype K%d struct {\n\tA rt.Buffer[float32]\n\tN int32\n}\n\n", i*100, i)
	}
	for n := 0; cl.Len() < size; n++ {
		fmt.Fprintf(&cl, `#define SCALE_%[1]d 2.0f
typedef float real_%[1]d;
float helper_%[1]d(float x) { return x * SCALE_%[1]d + Bias; }
__kernel void k_%[1]d(__global float* a, const int n) {
    real_%[1]d unused = 0;
    int i = get_global_id(0);
    if (i < n) {
        a[i] = helper_%[1]d(a[i]);
    }
}
`, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte(g.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "large.cl"), []byte(cl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkGenerateLarge times one dgen run over a package whose program
// source is 5 MB of OpenCL C.
func BenchmarkGenerateLarge(b *testing.B) {
	needSource(b)
	dir := writeLargePackage(b, 5<<20)
	b.SetBytes(5 << 20)
	for b.Loop() {
		if _, err := gen.Generate(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// writeSpecsPackage writes a package of n kernel specs, each with its own
// kernel of four parameters, and a device global every kernel reads.
func writeSpecsPackage(b *testing.B, n int) string {
	dir, err := os.MkdirTemp("testdata", "bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	var g, cl strings.Builder
	g.WriteString("package bench\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:global\nvar Bias rt.DeviceGlobal[float32]\n\n//dgen:program source=s.cl\nvar P rt.Program\n\n")
	for i := range n {
		fmt.Fprintf(&g, "//dgen:kernel program=P name=k%d\ntype K%d struct {\n\tA rt.Buffer[float32]\n\tB rt.Buffer[int32]\n\tN int32\n\tS float32\n}\n\n", i, i)
		fmt.Fprintf(&cl, "__kernel void k%d(__global float* a, __global int* b, int n, float s) { a[n] = b[n] * s + Bias; }\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte(g.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.cl"), []byte(cl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkGenerateSpecs times one dgen run over a package of 500 kernel
// specs (and their kernels, each threaded a device global).
func BenchmarkGenerateSpecs(b *testing.B) {
	needSource(b)
	dir := writeSpecsPackage(b, 500)
	for b.Loop() {
		if _, err := gen.Generate(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerateBomb times how long dgen takes to refuse a macro bomb
// (#define L1 L0 L0, … L60, then L60): the preprocessor's budget stops it.
func BenchmarkGenerateBomb(b *testing.B) {
	needSource(b)
	dir, err := os.MkdirTemp("testdata", "bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	var cl strings.Builder
	cl.WriteString("#define L0 x\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&cl, "#define L%d L%d L%d\n", i, i-1, i-1)
	}
	cl.WriteString("__kernel void k(__global float* a) { L60; }\n")
	g := "package bench\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=bomb.cl\nvar P rt.Program\n"
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte(g), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bomb.cl"), []byte(cl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := gen.Generate(dir); err == nil {
			b.Fatal("the bomb generated")
		}
	}
}
