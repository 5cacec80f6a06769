package raw_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	rtrace "runtime/trace"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// The porting tests run on the CPU device (PoCL) by default; on the GPU
// machine DGEN_TEST_DEVICE=gpu and DGEN_BACKEND=opencl or cuda choose the
// H100 under either backend.

// open opens the test's context, skipping where no OpenCL device exists.
func open(t *testing.T) *rt.Context {
	t.Helper()
	cfg := rt.Config{Backend: rt.Backend(testenv.Backend()), Device: "cpu"}
	if d := os.Getenv("DGEN_TEST_DEVICE"); d != "" {
		cfg.Device = d
	}
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		t.Skipf("no device: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// cuda reports whether ctx runs on the CUDA backend, which open chose
// from DGEN_BACKEND (or automatic selection, which prefers it on a GPU).
func cuda(ctx *rt.Context) bool { return ctx.Backend() == "cuda" }

func build(t *testing.T, ctx *rt.Context, name, src, opts string) *raw.Program {
	t.Helper()
	p, err := raw.Build(ctx, name, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func kernel(t *testing.T, p *raw.Program, name string) *raw.Kernel {
	t.Helper()
	k, err := p.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func read[T any](t *testing.T, q *rt.Queue, b rt.Buffer[T]) []T {
	t.Helper()
	got := make([]T, b.Len())
	if err := b.Read(q, got); err != nil {
		t.Fatal(err)
	}
	return got
}

const argSrc = `
typedef struct { float a; int b; short c[3]; } params;
__kernel void apply(__global float *out, params p, uchar3 v) {
	size_t i = get_global_id(0);
	out[i] = p.a * (float)i + (float)p.b + (float)p.c[2] + (float)v.z;
}`

// TestSetArgBytes sets a struct and a 3-component vector whose sizes are
// known only at run time, as ported code holds them: byte slices.
func TestSetArgBytes(t *testing.T) {
	ctx := open(t)
	q := ctx.Queue()
	k := kernel(t, build(t, ctx, "argbytes", argSrc, ""), "apply")
	out, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	p := make([]byte, 16) // float, int, short[3], padding
	binary.NativeEndian.PutUint32(p[0:], math.Float32bits(2))
	binary.NativeEndian.PutUint32(p[4:], 10)
	binary.NativeEndian.PutUint16(p[12:], 100)
	v := []byte{0, 0, 7, 0} // uchar3 takes the size of uchar4
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	if err := raw.SetArgBytes(k, 1, p); err != nil {
		t.Fatal(err)
	}
	if err := raw.SetArgBytes(k, 2, v); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(4)); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, q, out), []float32{117, 119, 121, 123}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, c := range []struct {
		i    int
		v    []byte
		want error
	}{{1, nil, rt.ErrInvalidArgument}, {3, p, rt.ErrOutOfRange}, {-1, p, rt.ErrOutOfRange}} {
		if err := raw.SetArgBytes(k, c.i, c.v); !errors.Is(err, c.want) {
			t.Errorf("SetArgBytes(k, %d, %d bytes) = %v, want %v", c.i, len(c.v), err, c.want)
		}
	}
}

const nullSrc = `
__kernel void pick(__global float *out, __global const float *opt) {
	size_t i = get_global_id(0);
	out[i] = opt ? opt[i] : -1.0f;
}`

// TestSetNullBuffer passes NULL, then a buffer, then NULL again: each
// change of the argument reaches the driver.
func TestSetNullBuffer(t *testing.T) {
	ctx := open(t)
	q := ctx.Queue()
	k := kernel(t, build(t, ctx, "null", nullSrc, ""), "pick")
	out, _ := rt.NewBuffer[float32](ctx, 2)
	in, _ := rt.NewBuffer[float32](ctx, 2)
	defer out.Free()
	defer in.Free()
	if err := in.Write(q, []float32{5, 6}); err != nil {
		t.Fatal(err)
	}
	raw.SetBuffer(k, 0, out)
	for _, c := range []struct {
		in   bool
		want []float32
	}{{false, []float32{-1, -1}}, {true, []float32{5, 6}}, {false, []float32{-1, -1}}} {
		err := k.SetNullBuffer(1)
		if c.in {
			err = raw.SetBuffer(k, 1, in)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Submit(q, k, rt.Range1(2)); err != nil {
			t.Fatal(err)
		}
		if got := read(t, q, out); !slices.Equal(got, c.want) {
			t.Errorf("with opt %v: got %v, want %v", c.in, got, c.want)
		}
	}
	if err := k.SetNullBuffer(2); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("SetNullBuffer(2) = %v, want ErrOutOfRange", err)
	}
	// A graph replays no NULL argument: recording one is refused.
	_, err := q.Record("null", func(q *rt.Queue) error {
		k.SetNullBuffer(1)
		return raw.Submit(q, k, rt.Range1(2))
	})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("recording a launch with a NULL argument: %v, want errors.ErrUnsupported", err)
	}
}

const infoSrc = `
__kernel __attribute__((reqd_work_group_size(4, 1, 1)))
void first(__global const float *restrict in, __local int *tmp, float scale, __constant int *table, __global volatile uint *flags) {
	size_t i = get_global_id(0);
	tmp[get_local_id(0)] = table[0];
	flags[i] = (uint)(in[i] * scale) + tmp[0];
}
__kernel void second(__global int *x) { x[0] = 1; }`

// TestKernelInfo reads what ported host code asks of clGetKernelInfo,
// clGetKernelArgInfo and clGetProgramInfo.
func TestKernelInfo(t *testing.T) {
	ctx := open(t)
	p := build(t, ctx, "info", infoSrc, "-cl-kernel-arg-info")
	names, err := p.KernelNames()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"first", "second"}) {
		t.Errorf("KernelNames = %v", names)
	}
	k := kernel(t, p, "first")
	if n := k.NumArgs(); n != 5 {
		t.Errorf("NumArgs = %d, want 5", n)
	}
	wg, err := k.CompileWorkGroupSize(ctx.Devices()[0])
	if err != nil || wg != [3]int{4, 1, 1} {
		t.Errorf("CompileWorkGroupSize = %v, %v; want [4 1 1]", wg, err)
	}
	if wg, err := kernel(t, p, "second").CompileWorkGroupSize(ctx.Devices()[0]); err != nil || wg != [3]int{} {
		t.Errorf("CompileWorkGroupSize of a kernel without the attribute = %v, %v; want zeros", wg, err)
	}
	if a, err := k.Attributes(); err != nil || !cuda(ctx) && !strings.Contains(a, "reqd_work_group_size") {
		t.Logf("Attributes = %q, %v", a, err) // OpenCL 1.2 leaves the string to the implementation
	}
	want := []raw.ArgInfo{
		{Name: "in", TypeName: "float*", Address: raw.AddressGlobal, Qualifiers: raw.TypeConst | raw.TypeRestrict},
		{Name: "tmp", TypeName: "int*", Address: raw.AddressLocal},
		{Name: "scale", TypeName: "float", Address: raw.AddressPrivate},
		{Name: "table", TypeName: "int*", Address: raw.AddressConstant, Qualifiers: raw.TypeConst},
		{Name: "flags", TypeName: "uint*", Address: raw.AddressGlobal, Qualifiers: raw.TypeVolatile},
	}
	for i, w := range want {
		got, err := k.ArgInfo(i)
		if err != nil {
			t.Fatalf("ArgInfo(%d): %v", i, err)
		}
		// A __constant pointer is const by its address space alone: drivers
		// differ on reporting the qualifier.
		if w.Address == raw.AddressConstant {
			got.Qualifiers &^= raw.TypeConst
			w.Qualifiers &^= raw.TypeConst
		}
		if got != w {
			t.Errorf("ArgInfo(%d) = %+v, want %+v", i, got, w)
		}
	}
	if _, err := k.ArgInfo(5); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("ArgInfo(5) = %v, want ErrOutOfRange", err)
	}
	// Without -cl-kernel-arg-info there are no names, and the error names
	// the option.
	k2 := kernel(t, build(t, ctx, "info-plain", infoSrc, ""), "first")
	if info, err := k2.ArgInfo(0); err == nil {
		if info.Name != "" {
			t.Logf("the driver keeps argument names without the option: %+v", info)
		}
	} else if !errors.Is(err, raw.ErrNoArgInfo) || !strings.Contains(err.Error(), "-cl-kernel-arg-info") {
		t.Errorf("ArgInfo without the option = %v, want ErrNoArgInfo naming -cl-kernel-arg-info", err)
	}
}

// TestBinariesLoad builds a program, takes its binaries and loads them
// into a new program, as clCreateProgramWithBinary does, and runs it.
func TestBinariesLoad(t *testing.T) {
	ctx := open(t)
	q := ctx.Queue()
	bins, err := build(t, ctx, "bins", nullSrc, "").Binaries()
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != len(ctx.Devices()) || len(bins[0]) == 0 {
		t.Fatalf("Binaries: %d binaries, want one per device (%d)", len(bins), len(ctx.Devices()))
	}
	p, err := raw.Load(ctx, "loaded", bins, "")
	if err != nil {
		t.Fatal(err)
	}
	k := kernel(t, p, "pick")
	out, _ := rt.NewBuffer[float32](ctx, 2)
	defer out.Free()
	raw.SetBuffer(k, 0, out)
	k.SetNullBuffer(1)
	if err := raw.Submit(q, k, rt.Range1(2)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, q, out); !slices.Equal(got, []float32{-1, -1}) {
		t.Errorf("got %v", got)
	}
	if _, err := raw.Load(ctx, "short", nil, ""); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("Load of no binaries = %v, want ErrInvalidArgument", err)
	}
}

const offsetSrc = `
__kernel void ids(__global int *out) {
	size_t i = get_global_id(0);
	out[i] = (int)i * 10 + (int)get_global_offset(0);
}`

// TestGlobalOffset launches over a range with a global work offset: the
// work-items' ids start at the offset.
func TestGlobalOffset(t *testing.T) {
	ctx := open(t)
	q := ctx.Queue()
	k := kernel(t, build(t, ctx, "offset", offsetSrc, ""), "ids")
	out, _ := rt.NewBuffer[int32](ctx, 8)
	defer out.Free()
	if err := out.Write(q, make([]int32, 8)); err != nil {
		t.Fatal(err)
	}
	raw.SetBuffer(k, 0, out)
	err := raw.Submit(q, k, rt.Range1(4).WithOffset(3))
	if cuda(ctx) {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("a launch with an offset on CUDA = %v, want errors.ErrUnsupported", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, q, out), []int32{0, 0, 0, 33, 43, 53, 63, 0}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, r := range []rt.Range{rt.Range1(4).WithOffset(-1), rt.Range1(4).WithOffset(1, 2), rt.Range2(2, 2).WithOffset(1)} {
		if err := raw.Submit(q, k, r); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("Submit over %v = %v, want ErrInvalidArgument", r, err)
		}
	}
	_, err = q.Record("offset", func(q *rt.Queue) error { return raw.Submit(q, k, rt.Range1(4).WithOffset(3)) })
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("recording a launch with an offset: %v, want errors.ErrUnsupported", err)
	}
}

func TestRangeString(t *testing.T) {
	for _, c := range []struct {
		r    rt.Range
		want string
	}{
		{rt.Range1(4).WithOffset(3), "[4]+[3]"},
		{rt.Range2(4, 4).WithLocal(2, 2).WithOffset(1, 2), "[4 4]/[2 2]+[1 2]"},
		{rt.Range1(4), "[4]"},
	} {
		if got := c.r.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.r, got, c.want)
		}
	}
}

// TestGoTrace runs a kernel under Go's execution tracer and finds the
// launch in the parsed trace, with its kernel, program and source line, on
// the goroutine that enqueued it.
func TestGoTrace(t *testing.T) {
	if rtrace.IsEnabled() {
		t.Skip("Go's execution tracer is on already (go test -trace)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to parse the trace")
	}
	ctx := open(t)
	q := ctx.Queue()
	k := kernel(t, build(t, ctx, "traced", nullSrc, ""), "pick")
	out, _ := rt.NewBuffer[float32](ctx, 2)
	defer out.Free()
	raw.SetBuffer(k, 0, out)
	k.SetNullBuffer(1)

	file := filepath.Join(t.TempDir(), "trace.out")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := rtrace.Start(f); err != nil {
		t.Fatal(err)
	}
	_, _, line, _ := runtime.Caller(0)
	err = raw.Submit(q, k, rt.Range1(2)) // line+1
	b, aerr := rt.Alloc[float32](q, 4)   // line+2
	if aerr == nil {
		aerr = b.Free()
	}
	ferr := errors.Join(q.Finish(), aerr)
	rtrace.Stop()
	f.Close()
	if err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	dump, err := exec.Command(gobin, "tool", "trace", "-d=parsed", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool trace: %v\n%s", err, dump)
	}
	var logs []string
	for _, l := range strings.Split(string(dump), "\n") {
		if strings.Contains(l, "Log ") && strings.Contains(l, `Category="dgen"`) {
			logs = append(logs, l)
		}
	}
	site := "port_test.go:" + strconv.Itoa(line+1)
	want := `kernel pick program \"traced\"`
	if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, want) && strings.Contains(l, site) }) {
		t.Errorf("no log of the launch (%s at %s) in the trace; dgen's logs:\n%s", want, site, strings.Join(logs, "\n"))
	}
	site = "port_test.go:" + strconv.Itoa(line+2)
	want = "alloc 16 bytes for untagged"
	if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, want) && strings.Contains(l, site) }) {
		t.Errorf("no log of the allocation (%s at %s) in the trace; dgen's logs:\n%s", want, site, strings.Join(logs, "\n"))
	}
}

// TestArgInfoFromCache builds a program with -cl-kernel-arg-info in two
// contexts over one persistent cache: the second has the names too, where
// a program loaded from the cache's binaries would have none.
func TestArgInfoFromCache(t *testing.T) {
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	src := infoSrc + "// " + t.Name() + "\n"
	for i := range 2 {
		ctx := open(t)
		k := kernel(t, build(t, ctx, "cached", src, "-cl-kernel-arg-info"), "first")
		if info, err := k.ArgInfo(2); err != nil || info.Name != "scale" {
			t.Errorf("context %d: ArgInfo(2) = %+v, %v; want the name scale", i, info, err)
		}
		ctx.Close()
	}
}

// TestSetBufferMemory: SetBuffer takes an rt.Buffer of any element type
// and allocates nothing; the zero Buffer is an error, never a NULL
// argument.
func TestSetBufferMemory(t *testing.T) {
	ctx := open(t)
	q := ctx.Queue()
	k := kernel(t, build(t, ctx, "memory", `__kernel void set(__global int *p, int v) { p[get_global_id(0)] = v; }`, ""), "set")
	ints, err := rt.NewBuffer[int32](ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer ints.Free()
	words, err := rt.NewBuffer[uint32](ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer words.Free()
	if err := errors.Join(raw.SetBuffer(k, 0, ints), raw.SetArg(k, 1, int32(5))); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(2)); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, q, ints), []int32{5, 5}; !slices.Equal(got, want) {
		t.Errorf("int32 buffer: got %v, want %v", got, want)
	}
	if err := errors.Join(raw.SetBuffer(k, 0, words), raw.SetArg(k, 1, int32(6))); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(2)); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, q, words), []uint32{6, 6}; !slices.Equal(got, want) {
		t.Errorf("uint32 buffer: got %v, want %v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { raw.SetBuffer(k, 0, ints) }); n != 0 {
		t.Errorf("SetBuffer allocates %v times, want 0", n)
	}
	if err := raw.SetBuffer(k, 0, rt.Buffer[int32]{}); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("SetBuffer(zero Buffer) = %v, want an error wrapping ErrInvalidArgument", err)
	}
}
