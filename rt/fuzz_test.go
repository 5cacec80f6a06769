package rt_test

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// FuzzSizes drives ranges, work-group sizes, offsets, __local sizes,
// views, transfers at offsets and allocation sizes on PoCL. The process
// must never die (PoCL aborted on large ranges), and every call must either
// succeed with the right result or return an error wrapping one of rt's
// sentinels. `make test` runs the seeds and testdata/fuzz/FuzzSizes;
//
//	go test ./rt -run '^$' -fuzz FuzzSizes -parallel 1 -fuzztime 10m
//
// searches for more.
func FuzzSizes(f *testing.F) {
	seeds := []sizesInput{
		{dims: 1, g: [3]int64{64, 1, 1}, localLen: 1, allocN: 16, viewOff: 32, viewN: 32},
		{dims: 2, g: [3]int64{16, 16, 1}, flags: withLocal | withOffset, l: [3]int64{4, 4, 1}, o: [3]int64{3, 5, 0}, localLen: 16},
		{dims: 3, g: [3]int64{4, 4, 4}, flags: withLocal, l: [3]int64{2, 2, 2}, localLen: 8, viewOff: 4096, viewN: 0},
		// The crashes of issue 48.
		{dims: 2, g: [3]int64{1 << 32, 1 << 32, 1}, localLen: 1},
		{dims: 3, g: [3]int64{1 << 22, 1 << 22, 1 << 22}, localLen: 1},
		{dims: 3, g: [3]int64{1 << 30, 1 << 30, 1 << 30}, localLen: 1},
		{dims: 1, g: [3]int64{1 << 62, 1, 1}, localLen: 1},
		{dims: 1, g: [3]int64{64, 1, 1}, localLen: 1<<62 + 4},
		{dims: 1, g: [3]int64{64, 1, 1}, localLen: 1 << 62},
		{dims: 1, g: [3]int64{1, 1, 1}, localLen: 1, allocN: 1 << 62},
		{dims: 1, g: [3]int64{1, 1, 1}, localLen: 1, allocN: math.MaxInt64, flags: pinned},
		{dims: 1, g: [3]int64{8, 1, 1}, flags: withOffset, o: [3]int64{math.MaxInt64 - 4, 0, 0}, localLen: 1},
		{dims: 1, g: [3]int64{math.MaxInt64, 1, 1}, localLen: 1, viewOff: -1, viewN: 8},
		{dims: 4, g: [3]int64{8, 8, 8}, localLen: 1, viewOff: 8, viewN: math.MaxInt64},
	}
	for _, s := range seeds {
		f.Add(s.dims, s.flags, s.g[0], s.g[1], s.g[2], s.l[0], s.l[1], s.l[2], s.o[0], s.o[1], s.o[2], s.localLen, s.allocN, s.viewOff, s.viewN)
	}
	f.Fuzz(func(t *testing.T, dims, flags uint8, g0, g1, g2, l0, l1, l2, o0, o1, o2, localLen, allocN, viewOff, viewN int64) {
		in := sizesInput{dims: dims, flags: flags, g: [3]int64{g0, g1, g2}, l: [3]int64{l0, l1, l2}, o: [3]int64{o0, o1, o2},
			localLen: localLen, allocN: allocN, viewOff: viewOff, viewN: viewN}
		fx := fuzzFixture(t)
		fx.mu.Lock()
		defer fx.mu.Unlock()
		fx.launch(t, in)
		fx.allocate(t, in)
		fx.view(t, in)
	})
}

// sizesInput is one input of FuzzSizes.
type sizesInput struct {
	dims, flags    uint8
	g, l, o        [3]int64 // global and local sizes, offsets
	localLen       int64    // elements of the __local argument
	allocN         int64    // elements of an allocation
	viewOff, viewN int64    // a view of the fixture's buffer, and a transfer at that offset
}

// The flags of sizesInput.
const (
	withLocal  = 1 << iota // the range has a work-group size
	withOffset             // and an offset
	launchEv               // launched with an event (raw.Launch) rather than without
	pinned                 // allocate pinned memory and an image too
)

// fuzzOut is the number of elements of the fixture's output buffer: a
// range of at most this many work-items is launched and checked; larger
// ones only up to fuzzRun work-items, beyond which they are checked and not
// run.
const (
	fuzzOut = 4096
	fuzzRun = 1 << 20
)

// sizesFixture is what every input of a fuzzing process uses: one context
// on PoCL, the ids kernel, its output buffer. Inputs run one at a time.
type sizesFixture struct {
	mu  sync.Mutex
	ctx *rt.Context
	q   *rt.Queue
	k   *raw.Kernel
	out rt.Buffer[uint32]
	max int64 // the device's largest allocation
}

var (
	sizesOnce sync.Once
	sizesFx   *sizesFixture
	sizesErr  error
)

// fuzzFixture opens the fixture once per process: the context stays open
// until the process ends, as a fuzzing worker's must.
func fuzzFixture(t *testing.T) *sizesFixture {
	sizesOnce.Do(func() {
		ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testenv.Device()}))
		if err != nil {
			sizesErr = err
			return
		}
		prog, err := raw.Build(ctx, "fuzzsizes", fuzzSrc, "")
		if err != nil {
			sizesErr = err
			return
		}
		k, err := prog.Kernel("ids")
		if err != nil {
			sizesErr = err
			return
		}
		out, err := rt.NewBuffer[uint32](ctx, fuzzOut)
		if err == nil {
			err = raw.SetBuffer(k, 0, out)
		}
		if err == nil {
			err = raw.SetArg(k, 2, uint32(fuzzOut))
		}
		if err != nil {
			sizesErr = err
			return
		}
		sizesFx = &sizesFixture{ctx: ctx, q: ctx.Queue(), k: k, out: out, max: ctx.Queue().Device().MaxAllocSize}
	})
	if sizesErr != nil {
		testenv.SkipWithoutDevice(t, sizesErr)
		t.Fatal(sizesErr)
	}
	return sizesFx
}

// fuzzSrc writes each work-item's global ids, below n, at its linear index
// without the offset.
const fuzzSrc = `__kernel void ids(__global uint* out, __local uint* tmp, uint n) {
	size_t x = get_global_id(0) - get_global_offset(0);
	size_t y = get_global_id(1) - get_global_offset(1);
	size_t z = get_global_id(2) - get_global_offset(2);
	size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;
	tmp[get_local_id(0) % 1] = (uint)i;
	if (i < n) out[i] = (uint)(get_global_id(0) + 7 * get_global_id(1) + 13 * get_global_id(2));
}`

// sentinels are the errors that every failure must wrap.
var sentinels = []error{rt.ErrInvalidArgument, rt.ErrOutOfRange, rt.ErrTooLarge, rt.ErrOutOfMemory, rt.ErrFreed, rt.ErrClosed,
	errors.ErrUnsupported} // rt/cuda: a range with offsets

// checkSentinel fails t unless err is nil or wraps one of rt's sentinels.
func checkSentinel(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("%s: %v: wraps none of rt's sentinels", what, err)
}

// rangeOf returns in's range, its sizes cut to int: 0 to 4 dimensions
// (those beyond 1 to 3 are refused), and a work-group size and offsets
// for each dimension where the flags ask for them.
func (in sizesInput) rangeOf() rt.Range {
	g := [3]int{int(in.g[0]), int(in.g[1]), int(in.g[2])}
	r := rt.Range{Dims: int(in.dims % 5), Global: g}
	n := min(r.Dims, 3)
	if in.flags&withLocal != 0 {
		r = r.WithLocal(ints(in.l[:n])...)
	}
	if in.flags&withOffset != 0 {
		r = r.WithOffset(ints(in.o[:n])...)
	}
	return r
}

func ints(s []int64) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

// workItems returns the product of r's global sizes, and false where it
// is not a positive int.
func workItems(r rt.Range) (int, bool) {
	if r.Dims < 1 || r.Dims > 3 {
		return 0, false
	}
	n := uint64(1)
	for _, g := range r.Global[:r.Dims] {
		if g <= 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(n, uint64(g))
		if hi != 0 || lo > math.MaxInt {
			return 0, false
		}
		n = lo
	}
	return int(n), true
}

// launch sets the __local argument, checks the launch of in's range and
// runs it where it is small enough, checking every element it wrote.
func (fx *sizesFixture) launch(t *testing.T, in sizesInput) {
	size := core.Local[int32]{Len: int(in.localLen)}.Bytes()
	if err := fx.k.SetLocal(1, size); err != nil {
		checkSentinel(t, fmt.Sprintf("SetLocal(%d bytes, Len %d)", size, in.localLen), err)
		if err := fx.k.SetLocal(1, 4); err != nil {
			t.Fatal(err)
		}
	}
	r := in.rangeOf()
	cs, err := core.CheckLaunch(cq(fx.q), (*core.RawKernel)(fx.k), core.Range(r))
	sent := rt.Range(cs)
	checkSentinel(t, fmt.Sprintf("check of a launch over %v", r), err)
	n, ok := workItems(r)
	if err == nil {
		if !ok {
			t.Fatalf("a launch over %v passed its check; its work-items overflow", r)
		}
		checkGroupLimits(t, fx.q, r, sent)
		if n > fuzzRun {
			return // valid, and too long to run here
		}
	}
	if err := fx.out.Fill(fx.q, math.MaxUint32); err != nil { // in order: before the launch
		t.Fatal(err)
	}
	if in.flags&launchEv != 0 {
		var ev *rt.Event
		ev, err = raw.Launch(fx.q, fx.k, r)
		if err == nil {
			err = ev.Wait()
			ev.Release()
		}
	} else {
		err = raw.Submit(fx.q, fx.k, r)
	}
	checkSentinel(t, fmt.Sprintf("launch over %v", r), err)
	if err != nil {
		return
	}
	got := make([]uint32, fuzzOut)
	if err := fx.out.Read(fx.q, got); err != nil {
		t.Fatal(err)
	}
	for i := range min(n, fuzzOut) {
		x, y, z := i%r.Global[0], 0, 0
		if r.Dims > 1 {
			y = (i / r.Global[0]) % r.Global[1]
		}
		if r.Dims > 2 {
			z = i / (r.Global[0] * r.Global[1])
		}
		want := uint32(uint64(x+r.Offset[0])) + 7*uint32(uint64(y+r.Offset[1])) + 13*uint32(uint64(z+r.Offset[2]))
		if got[i] != want {
			t.Fatalf("launch over %v: element %d = %d, want %d", r, i, got[i], want)
		}
	}
}

// checkGroupLimits fails t if q's device would be sent, for a launch over
// r, more work-groups than its backend says it runs (PoCL's scheduler
// counts 2^32-1; rt/cuda's grids are 2^31-1 × 65535 × 65535): sent's
// work-group size, or work-groups of one work-item where it has none, as
// the driver may choose.
func checkGroupLimits(t *testing.T, q *rt.Queue, r, sent rt.Range) {
	t.Helper()
	per, total := core.GroupLimits(cq(q))
	groups := uint64(1)
	for i := range sent.Dims {
		l := 1
		if sent.Local[i] > 0 {
			l = sent.Local[i]
		}
		n := uint64(sent.Global[i] / l)
		if per[i] > 0 && n > uint64(per[i]) {
			t.Fatalf("a launch over %v would reach the device as %v: %d work-groups in dimension %d, more than its %d", r, sent, n, i, per[i])
		}
		hi, lo := bits.Mul64(groups, n)
		if total > 0 && (hi != 0 || lo > uint64(total)) {
			t.Fatalf("a launch over %v would reach the device as %v: more than its %d work-groups", r, sent, total)
		}
		groups = lo
	}
}

// allocate asks for in.allocN elements every way there is, and for an
// image of in.allocN × in.viewN pixels, where that is refused or small: a
// valid request above 64 MiB is not made.
func (fx *sizesFixture) allocate(t *testing.T, in sizesInput) {
	fx.image(t, in)
	n := in.allocN
	bytes, ok := n*4, n >= 0 && n <= math.MaxInt64/4
	if ok && bytes > 64<<20 && bytes <= fx.max {
		return // valid, and too large to allocate here
	}
	b, err := rt.NewBuffer[int32](fx.ctx, int(n))
	checkSentinel(t, fmt.Sprintf("NewBuffer(%d)", n), err)
	if err == nil {
		checkSentinel(t, "Free", b.Free())
	}
	b, err = rt.Alloc[int32](fx.q, int(n))
	checkSentinel(t, fmt.Sprintf("Alloc(%d)", n), err)
	if err == nil {
		checkSentinel(t, "Free", b.Free())
	}
	if in.flags&pinned == 0 {
		return
	}
	p, err := rt.NewPinned[int32](fx.q, int(n))
	checkSentinel(t, fmt.Sprintf("NewPinned(%d)", n), err)
	if err == nil {
		if len(p.Slice()) != int(n) {
			t.Fatalf("NewPinned(%d): a slice of %d", n, len(p.Slice()))
		}
		checkSentinel(t, "Free", p.Free())
	}
}

// image makes an image of in.allocN × in.viewN pixels of 4 bytes, 2-D, or
// 1-D array of in.viewN layers where the flags ask for pinned memory,
// unless it is valid and above 64 MiB.
func (fx *sizesFixture) image(t *testing.T, in sizesInput) {
	w, h := in.allocN, in.viewN
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.SignedInt32, Width: int(w), Height: int(h)}
	if in.flags&pinned != 0 {
		d.Kind, d.Height, d.Layers = rt.Image1DArray, 0, int(h)
	}
	if w > 0 && h > 0 && w <= 1<<16 && h <= 1<<16 && w*h > 16<<20 {
		return // perhaps valid (no device makes larger sides), and too large to make here
	}
	img, err := rt.NewImage(fx.ctx, d)
	checkSentinel(t, fmt.Sprintf("NewImage(%v %d×%d)", d.Kind, w, h), err)
	if err == nil {
		checkSentinel(t, "Free", img.Free())
	}
}

// view makes a view of the output buffer and transfers through it and at
// its offset, checking what lands where.
func (fx *sizesFixture) view(t *testing.T, in sizesInput) {
	off, n := int(in.viewOff), int(in.viewN)
	v, err := fx.out.View(off, n)
	checkSentinel(t, fmt.Sprintf("View(%d, %d)", off, n), err)
	if err == nil {
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(off + i)
		}
		checkSentinel(t, "write view", v.Write(fx.q, src))
		got := make([]uint32, n)
		if err := fx.out.ReadAt(fx.q, off, got); err != nil {
			t.Fatalf("read back [%d, %d) written through a view: %v", off, off+n, err)
		}
		for i := range got {
			if got[i] != src[i] {
				t.Fatalf("view [%d, %d): element %d = %d, want %d", off, off+n, i, got[i], src[i])
			}
		}
		checkSentinel(t, "Free view", v.Free())
	}
	if n < 0 || n > fuzzOut {
		n = fuzzOut + 1
	}
	buf := make([]uint32, n)
	err = fx.out.ReadAt(fx.q, off, buf)
	checkSentinel(t, fmt.Sprintf("ReadAt(%d, %d)", off, n), err)
	if (err == nil) != (off >= 0 && off <= fuzzOut && n <= fuzzOut-off) {
		t.Fatalf("ReadAt(%d) of %d elements of %d: %v", off, n, fuzzOut, err)
	}
}
