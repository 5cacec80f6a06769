package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestViewTransfersAndKernels writes and reads through views, launches a
// kernel on one, and checks that only the view's elements change.
func TestViewTransfersAndKernels(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	// Offsets in multiples of the device's base address alignment (128
	// bytes on PoCL, 512 on NVIDIA's H100): off elements, then m, then a
	// view of the view at m/2.
	step := max(int(ctx.Devices()[0].MemBaseAddrAlign/4), 32) // CUDA has no alignment rule (1)
	off, m := 2*step, 8*step
	n := off + m + off
	b, err := rt.NewBuffer[float32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := released(b.Fill(q, 1)); err != nil {
		t.Fatal(err)
	}
	v, err := b.View(off, m)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != m {
		t.Fatalf("view length %d, want %d", v.Len(), m)
	}
	x := make([]float32, m)
	for i := range x {
		x[i] = float32(i)
	}
	if err := v.Write(q, x); err != nil {
		t.Fatal(err)
	}
	// y = 2*x + y over the view's second half, itself a view (of a view).
	half, err := v.View(m/2, m/2)
	if err != nil {
		t.Fatal(err)
	}
	xs, _ := rt.NewBuffer[float32](ctx, m/2)
	defer xs.Free()
	if err := released(xs.Fill(q, 10)); err != nil {
		t.Fatal(err)
	}
	k := kernelOf(t, ctx, saxpySrc, "saxpy")
	if err := errors.Join(raw.SetArg(k, 0, float32(2)), raw.SetBuffer(k, 1, xs), raw.SetBuffer(k, 2, half), raw.SetArg(k, 3, int32(m/2))); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(m/2)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	if err := b.Read(q, got); err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		want := float32(1)
		switch {
		case i >= off+m/2 && i < off+m:
			want = 20 + float32(i-off)
		case i >= off && i < off+m:
			want = float32(i - off)
		}
		if g != want {
			t.Fatalf("element %d = %v, want %v", i, g, want)
		}
	}
	part := make([]float32, 3)
	if err := half.ReadAt(q, 1, part); err != nil {
		t.Fatal(err)
	}
	h := float32(m / 2)
	if want := []float32{20 + h + 1, 20 + h + 2, 20 + h + 3}; !equal(part, want) {
		t.Errorf("ReadAt through a view of a view: %v, want %v", part, want)
	}
	if err := half.Free(); err != nil {
		t.Fatal(err)
	}
	if err := v.Read(q, x); err != nil {
		t.Errorf("read a view after freeing a view of it: %v", err)
	}
	if err := b.Read(q, got); err != nil {
		t.Errorf("read the buffer after freeing a view: %v", err)
	}
}

// TestViewErrors checks the bounds, the alignment and the life of views.
func TestViewErrors(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	align := ctx.Devices()[0].MemBaseAddrAlign
	if align == 1 {
		t.Skip("the backend has no alignment rule for views (rt/cuda: a view is a pointer offset)")
	}
	if align <= 4 {
		t.Fatalf("MemBaseAddrAlign = %d bytes, want the device's (PoCL: 128)", align)
	}
	b, err := rt.NewBuffer[int32](ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	step := int(align / 4)
	for _, c := range []struct {
		off, n int
		want   error
		msg    string
	}{
		{-1, 1, rt.ErrOutOfRange, "[-1, 0)"},
		{0, 1001, rt.ErrOutOfRange, "buffer of 1000"},
		{step, 1000 - step + 1, rt.ErrOutOfRange, "buffer of 1000"},
		{1, 4, rt.ErrInvalidArgument, "CL_DEVICE_MEM_BASE_ADDR_ALIGN"},
		{step + 1, 1, rt.ErrInvalidArgument, "not a multiple of"},
		{0, 1000, nil, ""},
		{step, 0, nil, ""},
		{1000, 0, nil, ""},
		{3, 0, nil, ""}, // empty: no sub-buffer, no alignment
	} {
		v, err := b.View(c.off, c.n)
		if !errors.Is(err, c.want) || (err != nil && !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("View(%d, %d): %v, want %v mentioning %q", c.off, c.n, err, c.want, c.msg)
		}
		if err == nil && v.Len() != c.n {
			t.Errorf("View(%d, %d) has length %d", c.off, c.n, v.Len())
		}
	}
	// A misaligned offset is checked against the root buffer: a view at an
	// aligned element of a view at an aligned one is aligned.
	v, err := b.View(step, 2*step)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.View(1, 1); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("misaligned view of a view: %v", err)
	}
	vv, err := v.View(step, step)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []rt.Buffer[int32]{v, vv} {
		if err := w.Write(q, []int32{1}); !errors.Is(err, rt.ErrFreed) {
			t.Errorf("write a view of a freed buffer: %v, want ErrFreed", err)
		}
	}
	if _, err := b.View(0, 1); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("view of a freed buffer: %v, want ErrFreed", err)
	}
	if err := v.Free(); err != nil {
		t.Errorf("free a view: %v", err)
	}
	if err := v.Free(); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("second free of a view: %v, want ErrFreed", err)
	}
	// A view of allocator memory fails once its buffer is freed, even when
	// the block serves the next allocation.
	pb, err := siteA.Alloc(q, 4*step)
	if err != nil {
		t.Fatal(err)
	}
	pv, err := pb.View(step, step)
	if err != nil {
		t.Fatal(err)
	}
	if err := pb.Free(); err != nil {
		t.Fatal(err)
	}
	again, err := siteA.Alloc(q, 4*step)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Free()
	if err := pv.Write(q, make([]float32, step)); !errors.Is(err, rt.ErrFreed) || !strings.Contains(err.Error(), "view lies in") {
		t.Errorf("write a view of a freed allocator buffer whose block was reused: %v, want ErrFreed", err)
	}
	var zero rt.Buffer[int32]
	if _, err := zero.View(0, 0); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("view of the zero Buffer: %v, want ErrInvalidArgument", err)
	}
}

// TestViewUsesRecordedOnParent is issue 12's corruption program through a
// view: a slow kernel on queue A reads a view of an allocator block; the
// view and its block are freed at once and the block reused on queue B and
// overwritten. The view's use must hold B back as a use of the block would.
func TestViewUsesRecordedOnParent(t *testing.T) {
	const n, iters, trials = 1 << 16, 400, 20
	r := newCrossQueueRig(t, rt.AllocFull)
	step := max(int(r.ctx.Devices()[0].MemBaseAddrAlign/4), 32) // CUDA has no alignment rule (1)
	for range trials {
		in, err := siteA.Alloc(r.qa, n+step)
		if err != nil {
			t.Fatal(err)
		}
		v, err := in.View(step, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := released(v.Fill(r.qa, 1)); err != nil {
			t.Fatal(err)
		}
		sum, _ := rt.NewBuffer[float32](r.ctx, n)
		if err := errors.Join(raw.SetBuffer(r.slowSum, 0, v), raw.SetBuffer(r.slowSum, 1, sum), raw.SetArg(r.slowSum, 2, int32(iters))); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(raw.Submit(r.qa, r.slowSum, rt.Range1(n)), r.qa.Flush(), v.Free(), in.Free()); err != nil {
			t.Fatal(err)
		}
		reused, err := siteA.Alloc(r.qb, n+step)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(raw.SetBuffer(r.set, 0, reused), raw.SetArg(r.set, 1, float32(2))); err != nil {
			t.Fatal(err)
		}
		if err := raw.Submit(r.qb, r.set, rt.Range1(n+step)); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, n)
		if err := sum.Read(r.qa, got); err != nil {
			t.Fatal(err)
		}
		if err := r.qb.Finish(); err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if g != iters {
				t.Fatalf("sum[%d] = %v, want %d: the reuse on B did not wait for the view's use on A", i, g, iters)
			}
		}
		reused.Free()
		sum.Free()
	}
	if s := r.ctx.Stats().Alloc.Total(); s.Reuses < trials || s.Ordered == 0 {
		t.Errorf("stats %+v: want a reuse per trial, some of them ordered", s)
	}
}

// TestViewsInTurn launches on one view after another, each released before
// the next is made: a driver may give the next sub-buffer the released
// one's handle, and the kernel must still be set to the new view.
func TestViewsInTurn(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	step := max(int(ctx.Devices()[0].MemBaseAddrAlign/4), 32) // CUDA has no alignment rule (1)
	const views = 32
	b, err := rt.NewBuffer[float32](ctx, views*step)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := released(b.Fill(q, 0)); err != nil {
		t.Fatal(err)
	}
	set := kernelOf(t, ctx, crossSource, "set")
	for i := range views {
		v, err := b.View(i*step, step)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(raw.SetBuffer(set, 0, v), raw.SetArg(set, 1, float32(i+1))); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(raw.Submit(q, set, rt.Range1(1)), q.Finish(), v.Free()); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]float32, views*step)
	if err := b.Read(q, got); err != nil {
		t.Fatal(err)
	}
	for i := range views {
		if got[i*step] != float32(i+1) {
			t.Errorf("first element of view %d = %v, want %d", i, got[i*step], i+1)
		}
	}
}
