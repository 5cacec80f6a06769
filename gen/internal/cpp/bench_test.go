package cpp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// largeSource returns about size bytes of OpenCL C in blocks that each
// define an object-like and a function-like macro, a typedef and a kernel
// whose signature depends on an #if.
func largeSource(size int) []byte {
	var b strings.Builder
	for n := 0; b.Len() < size; n++ {
		fmt.Fprintf(&b, `/* block %[1]d: a kernel with its own macros and typedef */
#define SCALE_%[1]d 2.0f
#define IDX_%[1]d(i) ((i) + %[1]d)
typedef float real_%[1]d;
#if %[1]d %% 3 == 0
__kernel void k_%[1]d(__global real_%[1]d* a, __global const float* b, const int n)
#else
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void k_%[1]d(__global real_%[1]d* a, __global const float* b, const int n)
#endif
{
    int i = get_global_id(0);
    if (i < n) {
        a[i] = b[IDX_%[1]d(i) %% n] * SCALE_%[1]d + (real_%[1]d)%[1]d;
    }
}
`, n)
	}
	return []byte(b.String())
}

// BenchmarkPreprocess preprocesses 5 MB of OpenCL C with this package and,
// beside it, with GCC's preprocessor (cpp -P, run as a process, writing to
// /dev/null) on the same file.
func BenchmarkPreprocess(b *testing.B) {
	src := largeSource(5 << 20)
	path := filepath.Join(b.TempDir(), "large.cl")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("dgen", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			r := Preprocess(&Config{Defines: OpenCL()}, path, src)
			if len(r.Errors) > 0 {
				b.Fatal(r.Errors)
			}
		}
	})
	b.Run("gcc-cpp", func(b *testing.B) {
		if _, err := exec.LookPath("cpp"); err != nil {
			b.Skip("no cpp on PATH")
		}
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			cmd := exec.Command("cpp", "-P", "-undef", "-nostdinc", path, "-o", os.DevNull)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("cpp: %v\n%s", err, out)
			}
		}
	})
}
