package rt_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// Every size is checked before the driver sees it (issue 48): ranges
// against size_t and the work-groups a device runs, local memory against
// overflow and the device's local memory, and allocations against the
// device's largest.

// sizesSrc is the kernel the size tests launch: it writes its linear
// global id, less the offset, and touches its local memory.
const sizesSrc = `__kernel void ids(__global uint* out, __local uint* tmp) {
	size_t x = get_global_id(0) - get_global_offset(0);
	size_t y = get_global_id(1) - get_global_offset(1);
	size_t z = get_global_id(2) - get_global_offset(2);
	size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;
	tmp[0] = (uint)i;
	out[i] = (uint)(get_global_id(0) + 7 * get_global_id(1) + 13 * get_global_id(2));
}`

// TestRangeLimits launches, on PoCL, the ranges that aborted the process
// inside PoCL's scheduler (SIGABRT, "max_wgs > 0") or divided by zero in
// the launch (SIGFPE): each must be an error wrapping ErrInvalidArgument
// that gives the value and the limit, and nothing reaches the driver.
func TestRangeLimits(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	dev := q.Device()
	k := kernelOf(t, ctx, sizesSrc, "ids")
	out, err := rt.NewBuffer[uint32](ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	if err := k.SetLocal(1, 4); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		r    rt.Range
		want string // in the message
		pocl bool   // refused by PoCL's own limits (a GPU backend may run it)
	}{
		{"2-D of 2^32 × 2^32", rt.Range2(1<<32, 1<<32), "4294967296×4294967296 work-items", false},
		{"3-D of 2^22 each", rt.Range3(1<<22, 1<<22, 1<<22), "more than a size_t holds", false},
		{"3-D of 2^30 each", rt.Range3(1<<30, 1<<30, 1<<30), "more than a size_t holds", false},
		{"1-D of 2^62", rt.Range1(1 << 62), "4294967295 work-groups", true},
		{"1-D of 2^40 in groups of 1", rt.Range1(1 << 40).WithLocal(1), "1099511627776 work-groups in dimension 0", true},
		{"2-D of 2^20 × 2^20 in groups of 1", rt.Range2(1<<20, 1<<20).WithLocal(1, 1), "1048576×1048576 = 1099511627776 work-groups", true},
		{"offset past size_t", rt.Range1(8).WithOffset(math.MaxInt - 4), "offset 9223372036854775803 plus global size 8", false},
		{"1-D of MaxInt", rt.Range1(math.MaxInt), "work-group", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.pocl && !strings.Contains(dev.Platform, "Portable Computing Language") {
				t.Skipf("%s: PoCL's limit", dev)
			}
			for _, submit := range []bool{false, true} {
				var err error
				if submit {
					err = raw.Submit(q, k, tt.r)
				} else {
					_, err = raw.Launch(q, k, tt.r)
				}
				if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("launch over %v: %v, want ErrInvalidArgument naming %q", tt.r, err, tt.want)
				}
			}
		})
	}
	// A valid launch after the refused ones runs, and checks its result.
	if err := raw.Submit(q, k, rt.Range2(8, 8).WithOffset(0, 0)); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 64)
	if err := out.Read(q, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := uint32(i%8 + 7*(i/8)); v != want {
			t.Fatalf("element %d = %d, want %d", i, v, want)
		}
	}
}

// TestLocalSizeOverflow sets __local arguments whose byte count wraps
// around: rt.Local[int32]{Len: 1<<62 + 4} launched with a 16-byte local
// argument and returned nil, and Len 1<<62 said "local size 0". Both must
// be refused, naming the overflow, through raw and generated code; local
// arguments that each fit but together exceed the device's local memory
// are refused at the launch.
func TestLocalSizeOverflow(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	k := kernelOf(t, ctx, sizesSrc, "ids")
	for _, n := range []int{1<<62 + 4, 1 << 62, math.MaxInt, -1} {
		size := core.Local[int32]{Len: n}.Bytes()
		err := k.SetLocal(1, size)
		if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "overflows") {
			t.Errorf("Local[int32]{Len: %d}: Bytes() = %d, SetLocal: %v; want ErrInvalidArgument naming the overflow", n, size, err)
		}
	}
	if n := (core.Local[[4]float64]{Len: 3}).Bytes(); n != 96 {
		t.Errorf("Local[[4]float64]{Len: 3}.Bytes() = %d, want 96", n)
	}

	// Generated code: the setter keeps the error for Submit.
	kern, err := codegen.Acquire(q, localSpec)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := rt.NewBuffer[uint32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	codegen.SetBuffer(kern, 0, buf)
	codegen.SetLocal(kern, 1, core.Local[int32]{Len: 1<<62 + 4}.Bytes())
	if err := codegen.Submit(q, kern, rt.Range1(1), nil); !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("generated Enqueue with Local{Len: 1<<62 + 4}: %v, want ErrInvalidArgument naming the overflow", err)
	}

	// Two __local arguments of 3/4 of the device's local memory each.
	two := kernelOf(t, ctx, `__kernel void two(__global uint* out, __local uint* a, __local uint* b) { a[0] = 1; b[0] = 2; out[0] = a[0] + b[0]; }`, "two")
	lm := int(q.Device().LocalMemSize)
	if err := raw.SetBuffer(two, 0, buf); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := two.SetLocal(i, lm/4*3); err != nil {
			t.Fatalf("argument %d of %d bytes (of %d): %v", i, lm/4*3, lm, err)
		}
	}
	if err := raw.Submit(q, two, rt.Range1(1)); !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "local memory") {
		t.Errorf("two __local arguments of %d bytes each, %d in all: %v, want ErrInvalidArgument naming local memory", lm/4*3, lm, err)
	}
}

var (
	localSpecProg   = codegen.Register(&codegen.Program{ID: pkg + "localSpecProg", Image: sizesSrc, Name: "sizes.cl", Var: codegen.ProgramVar(&localSpecHandle)})
	localSpecHandle rt.Program
	localSpec       = codegen.Register(&codegen.Kernel{ID: pkg + "localSpec", Name: "ids", Program: localSpecProg, Params: 2})
)

// TestAllocationTooLarge asks for memory above the device's largest
// allocation, and for element counts whose byte count overflows: each
// must be an error wrapping ErrTooLarge, from every way of allocating
// (rt.NewPinned gave the driver's CL_INVALID_BUFFER_SIZE; AllocSite.Alloc
// gave ErrInvalidArgument for an overflow).
func TestAllocationTooLarge(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	big := int(q.Device().MaxAllocSize/4) + 1 // float32s: a byte more than the device allocates
	over := 1<<62 + 1                         // float32s: more bytes than an int64 holds
	tests := []struct {
		name string
		call func(n int) error
	}{
		{"NewBuffer", func(n int) error { b, err := rt.NewBuffer[float32](ctx, n); b.Free(); return err }},
		{"NewPinned", func(n int) error {
			p, err := rt.NewPinned[float32](q, n)
			if err == nil {
				p.Free()
			}
			return err
		}},
		{"AllocSite.Alloc", func(n int) error { b, err := siteA.Alloc(q, n); b.Free(); return err }},
		{"Alloc", func(n int) error { b, err := rt.Alloc[float32](q, n); b.Free(); return err }},
	}
	for _, tt := range tests {
		for _, n := range []int{big, over} {
			if err := tt.call(n); !errors.Is(err, rt.ErrTooLarge) {
				t.Errorf("%s of %d float32s (the device allocates %d bytes at most): %v, want ErrTooLarge", tt.name, n, q.Device().MaxAllocSize, err)
			}
		}
	}
	for _, n := range []int{-1, math.MinInt} {
		if _, err := rt.NewBuffer[float32](ctx, n); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("NewBuffer of %d: %v, want ErrInvalidArgument", n, err)
		}
	}
}

// TestImageTooLarge makes images larger than the device makes them, and
// images whose bytes overflow: errors that name the side and the limit
// (ErrInvalidArgument), or ErrTooLarge, where PoCL said
// CL_INVALID_OPERATION.
func TestImageTooLarge(t *testing.T) {
	ctx := openCPU(t)
	tests := []struct {
		d    rt.ImageDesc
		want error
		msg  string
	}{
		{rt.ImageDesc{Kind: rt.Image2D, Width: 1 << 20, Height: 1}, rt.ErrInvalidArgument, "its width, 1048576, is more than"},
		{rt.ImageDesc{Kind: rt.Image2D, Width: 1, Height: 1 << 20}, rt.ErrInvalidArgument, "its height, 1048576, is more than"},
		{rt.ImageDesc{Kind: rt.Image3D, Width: 4, Height: 4, Depth: 1 << 20}, rt.ErrInvalidArgument, "its depth"},
		{rt.ImageDesc{Kind: rt.Image2DArray, Width: 4, Height: 4, Layers: 1 << 30}, rt.ErrInvalidArgument, "its layers"},
		{rt.ImageDesc{Kind: rt.Image1D, Width: 1 << 40}, rt.ErrInvalidArgument, "its width"},
		{rt.ImageDesc{Kind: rt.Image3D, Width: 1 << 40, Height: 1 << 40, Depth: 1 << 40}, rt.ErrTooLarge, "overflows"},
	}
	for _, tt := range tests {
		tt.d.Order, tt.d.Type = rt.OrderRGBA, rt.Float
		img, err := rt.NewImage(ctx, tt.d)
		if err == nil {
			img.Free()
		}
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("NewImage(%v %d×%d×%d, %d layers): %v, want %v with %q", tt.d.Kind, tt.d.Width, tt.d.Height, tt.d.Depth, tt.d.Layers, err, tt.want, tt.msg)
		}
	}
}

// TestImagePitchOverflow reads an image into host memory with pitches
// whose products overflow: an error wrapping ErrOutOfRange, never a copy
// past the host memory.
func TestImagePitchOverflow(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image3D, Order: rt.OrderR, Type: rt.UnsignedInt8, Width: 4, Height: 4, Depth: 4})
	if err != nil {
		t.Skipf("3-D images: %v", err)
	}
	defer img.Free()
	dst := make([]byte, 64)
	for _, r := range []rt.ImageRegion{
		{RowPitch: 1 << 62},
		{RowPitch: math.MaxInt},
		{RowPitch: 4, SlicePitch: math.MaxInt / 2},
		{RowPitch: 1 << 61, SlicePitch: 1 << 62},
	} {
		if err := img.Read(q, r, dst); !errors.Is(err, rt.ErrOutOfRange) {
			t.Errorf("read with pitches %d, %d: %v, want ErrOutOfRange", r.RowPitch, r.SlicePitch, err)
		}
	}
}

// The backend "smallgrid" is the fake one with launch limits small enough
// to reach (8 work-items a dimension; 16, 4 and 4 work-groups a dimension,
// 32 in all), and queues that record the ranges they launch: where a
// driver choosing the work-group size could break the limits, rt chooses
// it, and a range that no work-group size fits is refused.
func init() { driver.Register("smallgrid", smallGridBackend{}) }

type smallGridBackend struct{ fakeBackend }

func (smallGridBackend) Platforms() ([]driver.PlatformInfo, error) {
	ps, err := fakeBackend{}.Platforms()
	d := &ps[0].Devices[0]
	d.Name, d.MaxWorkGroupSize = "small grid", 64
	d.MaxWorkItemSizes = [3]int64{8, 8, 8}
	d.MaxGroups, d.MaxGroupsTotal = [3]int64{16, 4, 4}, 32
	return ps, err
}

func (smallGridBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	return &gridContext{fakeContext: fakeContext{ndev: len(devs)}}, nil
}

type gridContext struct {
	fakeContext
	mu     sync.Mutex
	ranges []driver.NDRange
}

func (c *gridContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return gridQueue{c: c}, nil
}

type gridQueue struct {
	fakeQueue
	c *gridContext
}

func (q gridQueue) SubmitKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) error {
	q.c.mu.Lock()
	q.c.ranges = append(q.c.ranges, r)
	q.c.mu.Unlock()
	return q.fakeQueue.SubmitKernel(k, r, wait)
}

// TestWorkGroupChoice launches ranges on "smallgrid" and checks the
// work-group size each reached the driver with.
func TestWorkGroupChoice(t *testing.T) {
	ctx := openFakeBackend(t, "smallgrid", nil)
	q := ctx.Queue()
	k := kernelOf(t, ctx, "__kernel void k(int a) {}", "k")
	if err := raw.SetArg(k, 0, int32(1)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		r     rt.Range
		local []int  // what the driver receives; nil: none, the driver chooses
		err   string // in the error, where the range is refused
	}{
		{r: rt.Range1(16)},                  // 16 work-groups even of 1: the driver chooses
		{r: rt.Range1(64), local: []int{8}}, // 64 of 1 would be too many
		{r: rt.Range1(96), local: []int{8}}, // at least 6: 8 divides 96
		{r: rt.Range2(8, 32), local: []int{8, 8}},
		{r: rt.Range2(1024, 4), err: "no work-group size of at most 8 work-items divides global size 1024 in dimension 0 into at most 16 work-groups"},
		{r: rt.Range1(34), err: "divides global size 34"}, // at least 3: 34 has no divisor from 3 to 8
		{r: rt.Range1(200), err: "global size 200 in dimension 0"},
		{r: rt.Range1(17), err: "divides global size 17"},
		{r: rt.Range1(32).WithLocal(16), err: "local size 16 in dimension 0 is more than \"small grid\" allows there: 8"},
		{r: rt.Range2(16, 16).WithLocal(1, 1), err: "16 work-groups in dimension 1 (global size 16, local size 1) are more than one launch may have there: 4"},
		{r: rt.Range3(16, 4, 4).WithLocal(1, 1, 1), err: "16×4×4 = 256 work-groups are more than one launch may have: 32"},
		{r: rt.Range3(16, 4, 4).WithLocal(2, 1, 1), err: "8×4×4 = 128 work-groups"},
		{r: rt.Range3(16, 4, 4).WithLocal(8, 2, 2), local: []int{8, 2, 2}},
	}
	for _, tt := range tests {
		for range 2 { // the second launch passes the check's cache
			err := raw.Submit(q, k, tt.r)
			if tt.err != "" {
				if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("launch over %v: %v, want ErrInvalidArgument with %q", tt.r, err, tt.err)
				}
				continue
			}
			if err != nil {
				t.Errorf("launch over %v: %v", tt.r, err)
				continue
			}
			got := lastRange(t, ctx)
			want := [3]int{}
			copy(want[:], tt.local)
			if got.Local != want || got.Global != tt.r.Global {
				t.Errorf("launch over %v reached the driver as global %v, local %v; want local %v", tt.r, got.Global, got.Local, want)
			}
		}
	}
}

// lastRange returns the range of the last launch on ctx, a "smallgrid"
// context.
func lastRange(t *testing.T, ctx *rt.Context) driver.NDRange {
	t.Helper()
	c := core.DriverContext(cx(ctx)).(*gridContext)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ranges) == 0 {
		t.Fatal("no launch reached the driver")
	}
	return c.ranges[len(c.ranges)-1]
}

// TestGridLimits launches 70,000 work-groups in the second dimension,
// more than a CUDA grid has (65,535): without a work-group size rt/cuda
// gets one that fits from rt, and every backend runs the range right;
// with work-groups of one work-item in that dimension, rt/cuda refuses it
// before the driver, naming the limit, where the others run it.
func TestGridLimits(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	k := kernelOf(t, ctx, fuzzSrc, "ids")
	out, err := rt.NewBuffer[uint32](ctx, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := errors.Join(raw.SetBuffer(k, 0, out), k.SetLocal(1, 4), raw.SetArg(k, 2, uint32(4096))); err != nil {
		t.Fatal(err)
	}
	cuda := q.Device().Platform == "CUDA driver API"
	for _, r := range []rt.Range{rt.Range2(1, 70000), rt.Range2(1, 70000).WithLocal(1, 1)} {
		if _, err := out.Fill(q, math.MaxUint32); err != nil {
			t.Fatal(err)
		}
		err := raw.Submit(q, k, r)
		if cuda && r.Local[0] != 0 {
			if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "70000 work-groups in dimension 1") {
				t.Errorf("launch over %v on %s: %v, want ErrInvalidArgument naming 70000 work-groups", r, q.Device(), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("launch over %v on %s: %v", r, q.Device(), err)
		}
		got := make([]uint32, 4096)
		if err := out.Read(q, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if want := uint32(7 * i); v != want {
				t.Fatalf("launch over %v on %s: element %d = %d, want %d", r, q.Device(), i, v, want)
			}
		}
	}
}
