package golden

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/gen"
	"github.com/dgen-go/dgen/rt/driver"
)

// launch builds the device image of program prog of a golden package on
// the first OpenCL device and runs kernel name over n work-items with
// buffers args (the user's arguments, then the hidden globals), reading
// the first argument back into out.
func launch[T any](t *testing.T, pkg, prog, name string, n int, out []T, args ...[]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "src", pkg)
	b, err := os.ReadFile(filepath.Join(dir, gen.MainFile))
	if err != nil {
		t.Fatal(err)
	}
	image, ok := imagesOf(t, []gen.File{{Name: gen.MainFile, Content: b}})[prog]
	if !ok {
		t.Fatalf("no image of %s in %s", prog, pkg)
	}
	ctx := openDevice(t)
	p, err := ctx.BuildProgram(image, "-I"+filepath.Join(dir, "inc")+" -DSTEP=2")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	runKernel(t, ctx, p, name, n, out, args...)
}

// runKernel runs kernel name of p over n work-items with buffers args (the
// user's arguments, then the hidden globals), reading the first argument
// back into out.
func runKernel[T any](t *testing.T, ctx driver.Context, p driver.Program, name string, n int, out []T, args ...[]byte) {
	t.Helper()
	k, err := p.NewKernel(name)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	q, err := ctx.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	first, err := ctx.NewBuffer(int64(len(args[0])))
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		buf := first
		if i > 0 {
			if buf, err = ctx.NewBuffer(int64(len(a))); err != nil {
				t.Fatal(err)
			}
		}
		defer buf.Release()
		if _, err := q.WriteBuffer(buf, true, 0, int64(len(a)), unsafe.Pointer(&a[0]), nil); err != nil {
			t.Fatal(err)
		}
		if err := k.SetArgBuffer(i, buf); err != nil {
			t.Fatalf("argument %d: %v", i, err)
		}
	}
	if err := q.SubmitKernel(k, driver.NDRange{Dims: 1, Global: [3]int{n, 1, 1}}, nil); err != nil {
		t.Fatal(err)
	}
	size := int64(len(out)) * int64(unsafe.Sizeof(out[0]))
	if _, err := q.ReadBuffer(first, true, 0, size, unsafe.Pointer(&out[0]), nil); err != nil {
		t.Fatal(err)
	}
}

func bytesOf[T any](v ...T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(v[0])))
}

// TestLaunchThreaded runs the image of package threaded, whose kernel reads
// Scale through a macro of an included header and Offset through a helper
// function of that header: a[i] = a[i]*Scale + Offset.
func TestLaunchThreaded(t *testing.T) {
	needSource(t)
	out := make([]float32, 4)
	launch(t, "threaded", "T", "apply", 4, out, bytesOf[float32](1, 2, 3, 4), bytesOf[float32](10), bytesOf[int32](5))
	for i, v := range out {
		if want := float32(i+1)*10 + 5; v != want {
			t.Errorf("a[%d] = %v, want %v", i, v, want)
		}
	}
}

// TestLaunchNames runs the image of package names: globals of two Go types
// named RGBA and of Pair[int32] and Pair[float64] each read their own
// struct.
func TestLaunchNames(t *testing.T) {
	needSource(t)
	type rgba struct{ R, G, B, A float32 }
	type pairI struct{ A, B int32 }
	type pairF struct{ A, B float64 }
	out := make([]float64, 4)
	launch(t, "names", "N", "read", 1, out, bytesOf[float64](0, 0, 0, 0),
		bytesOf(rgba{1, 2.5, 3, 4}), []byte{10, 20, 30, 40}, bytesOf(pairI{7, 9}), bytesOf(pairF{1.5, 2.75}))
	want := []float64{2.5, 20, 9, 2.75}
	for i := range want {
		if math.Abs(out[i]-want[i]) > 1e-9 {
			t.Errorf("out[%d] = %v, want %v", i, out[i], want[i])
		}
	}
}
