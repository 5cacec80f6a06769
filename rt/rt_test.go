package rt_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	_ "github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// openCPU opens a context with profiling on, on the device that
// DGEN_DEVICE selects if set (to run the tests on a GPU), else on the first
// CPU device (PoCL).
func openCPU(t testing.TB) *rt.Context {
	t.Helper()
	sel := testenv.Device()
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: sel, Profiling: true}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("open context on %q (apt-get install pocl-opencl-icd): %v", sel, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ctx
}

func randFloats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*200 - 100
	}
	return s
}

func TestBufferRoundTrip(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	r := rand.New(rand.NewPCG(rand.Uint64(), 1))
	for _, n := range []int{0, 1, 7, 1001, 64 << 20 / 4} {
		buf, err := rt.NewBuffer[float32](ctx, n)
		if err != nil {
			t.Fatalf("NewBuffer(%d): %v", n, err)
		}
		src := randFloats(r, n)
		if err := buf.Write(q, src); err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
		dst := make([]float32, n)
		if err := buf.Read(q, dst); err != nil {
			t.Fatalf("read %d: %v", n, err)
		}
		for i := range src {
			if src[i] != dst[i] {
				t.Fatalf("size %d: element %d = %v, want %v", n, i, dst[i], src[i])
			}
		}
		if err := buf.Free(); err != nil {
			t.Fatalf("free %d: %v", n, err)
		}
	}
}

func TestBufferFillCopyAndOffsets(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	a, err := rt.NewBuffer[int32](ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.NewBuffer[int32](ctx, 120)
	if err != nil {
		t.Fatal(err)
	}
	fill, err := a.FillEvent(q, -7)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteAt(q, 10, []int32{1, 2, 3}, fill); err != nil {
		t.Fatal(err)
	}
	cp, err := a.CopyToEvent(q, b)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int32, 5)
	if err := b.ReadAt(q, 9, got, cp); err != nil {
		t.Fatal(err)
	}
	if want := []int32{-7, 1, 2, 3, -7}; !equal(got, want) {
		t.Errorf("after fill, write at 10 and copy: %v, want %v", got, want)
	}
	if err := b.CopyTo(q, a); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("copy 120 elements into 100: %v, want ErrOutOfRange", err)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const saxpySrc = `
__kernel void saxpy(float a, __global const float *x, __global float *y, int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}
`

func TestSaxpy(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	prog, err := raw.Build(ctx, "saxpy", saxpySrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 2))
	const n = 10007
	a := r.Float32()*4 - 2
	x, y := randFloats(r, n), randFloats(r, n)
	bx, _ := rt.NewBuffer[float32](ctx, n)
	by, _ := rt.NewBuffer[float32](ctx, n)
	if err := bx.Write(q, x); err != nil {
		t.Fatal(err)
	}
	if err := by.Write(q, y); err != nil {
		t.Fatal(err)
	}
	for i, err := range []error{raw.SetArg(k, 0, a), raw.SetBuffer(k, 1, bx), raw.SetBuffer(k, 2, by), raw.SetArg(k, 3, int32(n))} {
		if err != nil {
			t.Fatalf("arg %d: %v", i, err)
		}
	}
	ev, err := raw.Launch(q, k, rt.Range1(n+(64-n%64)).WithLocal(64))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	if err := by.Read(q, got, ev); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := a*x[i] + y[i]
		if math.Abs(float64(got[i]-want)) > 1e-4*math.Max(1, math.Abs(float64(want))) {
			t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
	tm, err := ev.Timing()
	if err != nil {
		t.Fatal(err)
	}
	if !(tm.Queued <= tm.Submitted && tm.Submitted <= tm.Started && tm.Started <= tm.Ended && tm.Ended > 0) {
		t.Errorf("timestamps out of order: %+v", tm)
	}
}

const stencilSrc = `
__kernel void stencil5(__global const float *in, __global float *out, int rows, int cols) {
	int c = get_global_id(0), r = get_global_id(1);
	if (r >= rows || c >= cols) return;
	float up = r > 0 ? in[(r-1)*cols + c] : in[r*cols + c];
	float down = r < rows-1 ? in[(r+1)*cols + c] : in[r*cols + c];
	float left = c > 0 ? in[r*cols + c-1] : in[r*cols + c];
	float right = c < cols-1 ? in[r*cols + c+1] : in[r*cols + c];
	out[r*cols + c] = 0.5f*in[r*cols + c] + 0.125f*(up + down + left + right);
}
`

func stencilRef(in []float32, rows, cols int) []float32 {
	out := make([]float32, len(in))
	at := func(r, c int) float32 {
		r = min(max(r, 0), rows-1)
		c = min(max(c, 0), cols-1)
		return in[r*cols+c]
	}
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			out[r*cols+c] = 0.5*at(r, c) + 0.125*(at(r-1, c)+at(r+1, c)+at(r, c-1)+at(r, c+1))
		}
	}
	return out
}

func TestStencil2D(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	prog, err := raw.Build(ctx, "stencil", stencilSrc, "-cl-mad-enable")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("stencil5")
	if err != nil {
		t.Fatal(err)
	}
	const rows, cols = 67, 131
	in := randFloats(rand.New(rand.NewPCG(rand.Uint64(), 3)), rows*cols)
	bin, _ := rt.NewBuffer[float32](ctx, rows*cols)
	bout, _ := rt.NewBuffer[float32](ctx, rows*cols)
	if err := bin.Write(q, in); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(raw.SetBuffer(k, 0, bin), raw.SetBuffer(k, 1, bout), raw.SetArg(k, 2, int32(rows)), raw.SetArg(k, 3, int32(cols))); err != nil {
		t.Fatal(err)
	}
	ev, err := raw.Launch(q, k, rt.Range2(cols, rows))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, rows*cols)
	if err := bout.Read(q, got, ev); err != nil {
		t.Fatal(err)
	}
	want := stencilRef(in, rows, cols)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-4 {
			t.Fatalf("cell %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()

	_, err := raw.Build(ctx, "broken", "__kernel void f(__global int *p) {\n  p[0] = 1\n}\n", "")
	if !errors.Is(err, rt.ErrBuildFailed) {
		t.Fatalf("build of a syntax error: %v, want ErrBuildFailed", err)
	}
	var de *rt.DeviceError
	if !errors.As(err, &de) || !strings.Contains(de.Log, ":2:") || de.Name != "CL_BUILD_PROGRAM_FAILURE" {
		t.Errorf("build error %q: want CL_BUILD_PROGRAM_FAILURE with a log naming line 2", err)
	}
	if !strings.Contains(err.Error(), `build program "broken" for device`) {
		t.Errorf("build error %q does not name the program and device", err)
	}

	prog, err := raw.Build(ctx, "saxpy", saxpySrc, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prog.Kernel("saxpi"); !errors.Is(err, rt.ErrNoKernel) || !strings.Contains(err.Error(), "saxpy") {
		t.Errorf("missing kernel: %v, want ErrNoKernel listing saxpy", err)
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.SetArg(k, 4, int32(1)); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("argument 4 of 4: %v, want ErrOutOfRange", err)
	}
	if err := raw.SetArg(k, 3, 1); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("argument of Go int: %v, want ErrInvalidArgument", err)
	}
	if _, err := raw.Launch(q, k, rt.Range1(0)); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("empty range: %v, want ErrInvalidArgument", err)
	}
	if _, err := raw.Launch(q, k, rt.Range1(10).WithLocal(3)); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("local size not dividing: %v, want ErrInvalidArgument", err)
	}

	buf, err := rt.NewBuffer[float32](ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	dst := []float32{42, 42, 42}
	if err := buf.ReadAt(q, 8, dst); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("read [8,11) of 10: %v, want ErrOutOfRange", err)
	}
	if err := buf.ReadAt(q, -1, dst[:1]); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("read at -1: %v, want ErrOutOfRange", err)
	}
	if dst[0] != 42 {
		t.Errorf("a failed read changed dst")
	}
	if err := buf.Free(); err != nil {
		t.Fatal(err)
	}
	if err := buf.Read(q, dst); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("read after free: %v, want ErrFreed", err)
	}
	if err := raw.SetBuffer(k, 1, buf); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("kernel argument after free: %v, want ErrFreed", err)
	}
	if err := buf.Free(); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("second free: %v, want ErrFreed", err)
	}
	if _, err := rt.NewBuffer[*int](ctx, 1); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("buffer of pointers: %v, want ErrInvalidArgument", err)
	}
	// A request above the device's largest allocation is ErrTooLarge on
	// every path, with no driver call.
	for name, alloc := range map[string]func() error{
		"NewBuffer": func() error { _, err := rt.NewBuffer[float32](ctx, 1<<40); return err },
		"Alloc":     func() error { _, err := rt.Alloc[float32](ctx.Queue(), 1<<40); return err },
	} {
		if err := alloc(); !errors.Is(err, rt.ErrTooLarge) {
			t.Errorf("4 TiB buffer through %s: %v, want ErrTooLarge", name, err)
		}
	}
}

// TestTwoDevices runs a kernel on each device of a two-device PoCL context.
// PoCL reads POCL_DEVICES when it loads, so the test runs itself again in a
// child process with it set.
func TestTwoDevices(t *testing.T) {
	if os.Getenv("DGEN_TEST_TWO_DEVICES") == "" {
		testenv.RequireDevice(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoDevices$", "-test.v")
		cmd.Env = append(os.Environ(), "DGEN_TEST_TWO_DEVICES=1", "POCL_DEVICES=pthread pthread")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "ran on 2 devices") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	ps, err := listPlatforms("opencl")
	if err != nil {
		t.Fatal(err)
	}
	sel := ""
	for _, p := range ps {
		if strings.Contains(p.Name, "Portable Computing Language") {
			sel = fmt.Sprintf("%d:*", p.Index)
		}
	}
	if sel == "" {
		t.Fatal("no PoCL platform")
	}
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: rt.BackendOpenCL, Device: sel})) // PoCL's, whatever DGEN_BACKEND says
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	if n := len(ctx.Devices()); n != 2 {
		t.Fatalf("context has %d devices, want 2", n)
	}
	prog, err := cx(ctx).BuildSource("saxpy", saxpySrc, "")
	if err != nil {
		t.Fatal(err)
	}
	bins, err := prog.Binaries()
	if err != nil || len(bins) != 2 {
		t.Fatalf("binaries: %d, %v", len(bins), err)
	}
	for i, dev := range ctx.Devices() {
		q, err := ctx.NewQueue(dev)
		if err != nil {
			t.Fatal(err)
		}
		kern, err := prog.Kernel("saxpy")
		if err != nil {
			t.Fatal(err)
		}
		k := (*raw.Kernel)(kern)
		x, _ := rt.NewBuffer[float32](ctx, 4)
		y, _ := rt.NewBuffer[float32](ctx, 4)
		if err := errors.Join(x.Write(q, []float32{1, 2, 3, 4}), y.Write(q, []float32{1, 1, 1, 1})); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(raw.SetArg(k, 0, float32(i+2)), raw.SetBuffer(k, 1, x), raw.SetBuffer(k, 2, y), raw.SetArg(k, 3, int32(4))); err != nil {
			t.Fatal(err)
		}
		ev, err := raw.Launch(q, k, rt.Range1(4))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 4)
		if err := y.Read(q, got, ev); err != nil {
			t.Fatal(err)
		}
		a := float32(i + 2)
		if want := []float32{a + 1, 2*a + 1, 3*a + 1, 4*a + 1}; !equal(got, want) {
			t.Errorf("device %d: %v, want %v", i, got, want)
		}
	}
	// Binaries built for two devices load back.
	if _, err := cx(ctx).LoadProgram("saxpy", bins, ""); err != nil {
		t.Fatalf("load binaries: %v", err)
	}
	t.Log("ran on 2 devices")
}

// TestConcurrentQueues launches kernels from 8 goroutines, each with its
// own queue and kernel object, and checks every result.
func TestConcurrentQueues(t *testing.T) {
	ctx := openCPU(t)
	prog, err := raw.Build(ctx, "saxpy", saxpySrc, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			q, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				errs <- err
				return
			}
			k, err := prog.Kernel("saxpy")
			if err != nil {
				errs <- err
				return
			}
			const n = 256
			x, _ := rt.NewBuffer[float32](ctx, n)
			y, _ := rt.NewBuffer[float32](ctx, n)
			xs := make([]float32, n)
			for i := range xs {
				xs[i] = float32(i)
			}
			if err := errors.Join(x.Write(q, xs), y.Write(q, make([]float32, n))); err != nil {
				errs <- err
				return
			}
			for it := 0; it < 20; it++ {
				if err := errors.Join(raw.SetArg(k, 0, float32(g)), raw.SetBuffer(k, 1, x), raw.SetBuffer(k, 2, y), raw.SetArg(k, 3, int32(n))); err != nil {
					errs <- err
					return
				}
				if _, err := raw.Launch(q, k, rt.Range1(n)); err != nil {
					errs <- err
					return
				}
			}
			got := make([]float32, n)
			if err := y.Read(q, got); err != nil {
				errs <- err
				return
			}
			for i := range got {
				if want := float32(20 * g * i); got[i] != want {
					errs <- errors.New("wrong result from a concurrent queue")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// listPlatforms lists the platforms of the named backend ("" is
// "opencl"), as `dgen devices` does.
func listPlatforms(backend string) ([]driver.PlatformInfo, error) {
	b, err := driver.Lookup(backend)
	if err != nil {
		return nil, err
	}
	return b.Platforms()
}

// memOf returns the memory of b, as rt/codegen and rt/raw reach it.
func memOf[T any](b rt.Buffer[T]) *core.Mem { return core.BufferMem(core.Buffer[T](b)) }

// cx, cq, ce and cg return rt's context, queue, event and graph as the
// core's, for the core's test hooks (testhooks.go).
func cx(c *rt.Context) *core.Context { return (*core.Context)(c) }
func cq(q *rt.Queue) *core.Queue     { return (*core.Queue)(q) }
func ce(e *rt.Event) *core.Event     { return (*core.Event)(e) }
func cg(g *rt.Graph) *core.Graph     { return (*core.Graph)(g) }

// withEnv returns cfg with the fields that it leaves at their zero value
// taken from the environment (rt.ConfigFromEnv), as the tests of this
// package open their contexts: on the backend and device that
// DGEN_BACKEND and DGEN_DEVICE select (the GPU bundle runs them so), with
// the persistent cache in TestMain's DGEN_CACHE_DIR, and with what a test
// sets by t.Setenv. OpenConfig itself reads no variable.
func withEnv(t testing.TB, cfg rt.Config) rt.Config {
	t.Helper()
	env, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		t.Fatalf("the environment's configuration: %v", err)
	}
	dst, src := reflect.ValueOf(&cfg).Elem(), reflect.ValueOf(env)
	for i := range dst.NumField() {
		if dst.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return cfg
}

// defaultCacheConfig returns the cache configuration of a Config without
// one (the persistent cache is off in a test binary).
func defaultCacheConfig() rt.CacheConfig { return rt.DefaultCacheConfig() }
