package rt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

// A kernel spec registered by hand as generated code registers it, for the
// launch tests on the fake driver and on PoCL.
var (
	touchProg  rt.Program
	_touchProg = &codegen.Program{Var: codegen.ProgramVar(&touchProg), ID: pkg + "touchProg", Name: "touchProg",
		Image: "__kernel void touch1(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }\n"}
	touchSpec = &codegen.Kernel{ID: pkg + "Touch", Name: "touch1", Program: _touchProg, Params: 1}
	_         = codegen.Register(_touchProg)
	_         = codegen.Register(touchSpec)
)

// enqueueTouch and enqueueTouchEvent do what the generated Enqueue and
// EnqueueEvent of the spec do.
func enqueueTouch(q *rt.Queue, out rt.Buffer[int32]) error {
	k, err := codegen.Acquire(q, touchSpec)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, out)
	return codegen.Submit(q, k, rt.Range1(1), nil)
}

// enqueueTouchContext is enqueueTouch as a generated EnqueueContext runs.
func enqueueTouchContext(c context.Context, q *rt.Queue, out rt.Buffer[int32]) error {
	k, err := codegen.AcquireContext(c, q, touchSpec)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, out)
	return codegen.Submit(q, k, rt.Range1(1), nil)
}

func enqueueTouchEvent(q *rt.Queue, out rt.Buffer[int32]) (*rt.Event, error) {
	k, err := codegen.Acquire(q, touchSpec)
	if err != nil {
		return nil, err
	}
	codegen.SetBuffer(k, 0, out)
	return codegen.Launch(q, k, rt.Range1(1), nil)
}

// TestLaunchEvents checks, on the fake driver, which commands create a
// driver event: only those that return an *rt.Event.
func TestLaunchEvents(t *testing.T) {
	ctx := openFake(t, nil)
	q := ctx.Queue()
	k, buf := touchKernel(t, ctx)
	v := []int32{1}
	release := func(ev *rt.Event, err error) error {
		if rerr := ev.Release(); err == nil {
			err = rerr
		}
		return err
	}
	tests := []struct {
		name   string
		events int64
		do     func() error
	}{
		{"generated Enqueue", 0, func() error { return enqueueTouch(q, buf) }},
		{"generated EnqueueEvent", 1, func() error { return release(enqueueTouchEvent(q, buf)) }},
		{"raw.Submit", 0, func() error { return raw.Submit(q, k, rt.Range1(1)) }},
		{"raw.Launch", 1, func() error { return release(raw.Launch(q, k, rt.Range1(1))) }},
		{"Buffer.Write", 0, func() error { return buf.Write(q, v) }},
		{"Buffer.Read", 0, func() error { return buf.Read(q, v) }},
		{"Buffer.Fill", 1, func() error { return buf.Fill(q, 0) }}, // released at once: the driver makes one
		{"Buffer.FillEvent", 1, func() error { return release(buf.FillEvent(q, 0)) }},
		{"Queue.Marker", 1, func() error { return release(q.Marker()) }},
	}
	for _, tt := range tests {
		before := fakeStats.events.Load()
		if err := tt.do(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := fakeStats.events.Load() - before; n != tt.events {
			t.Errorf("%s created %d driver events, want %d", tt.name, n, tt.events)
		}
	}
}

// allocFree frees what an allocation returned.
func allocFree(b rt.Buffer[byte], err error) error {
	if err != nil {
		return err
	}
	return b.Free()
}

// TestFillCopyEvents: Buffer.Fill and CopyTo hand out no Event (the
// context holds none after them) and ask the backend for none
// (driver.SubmitQueue), FillEvent and CopyToEvent one each; under tracing
// with device times every form takes the driver's event, and reports its
// times; every form does its work, on PoCL.
func TestFillCopyEvents(t *testing.T) {
	for _, traced := range []bool{false, true} {
		t.Run(fmt.Sprintf("traced=%v", traced), func(t *testing.T) {
			var ctx *rt.Context
			var rec *trace.Recorder
			if traced {
				ctx, rec = openTraced(t)
			} else {
				ctx = openCPU(t)
			}
			testFillCopyEvents(t, ctx, rec)
		})
	}
}

// testFillCopyEvents is TestFillCopyEvents on ctx, traced to rec with
// device times when rec is not nil.
func testFillCopyEvents(t *testing.T, ctx *rt.Context, rec *trace.Recorder) {
	q, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	made := core.CountDriverEvents(cq(q))
	src, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Free()
	dst, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Free()
	tests := []struct {
		name   string
		fill   int32 // the value src is filled with before the copy
		events int   // Events that the call hands out
		driver int64 // driver events its two commands create untraced
		do     func(v int32) (*rt.Event, error)
	}{
		{"Fill and CopyTo", 3, 0, 0, func(v int32) (*rt.Event, error) {
			return nil, errors.Join(src.Fill(q, v), src.CopyTo(q, dst))
		}},
		{"FillEvent", 4, 1, 1, func(v int32) (*rt.Event, error) {
			ev, err := src.FillEvent(q, v)
			return ev, errors.Join(err, src.CopyTo(q, dst))
		}},
		{"CopyToEvent", 5, 1, 1, func(v int32) (*rt.Event, error) {
			if err := src.Fill(q, v); err != nil {
				return nil, err
			}
			return src.CopyToEvent(q, dst)
		}},
	}
	for _, tt := range tests {
		before, madeBefore := ctx.Stats().Events, made.Load()
		if rec != nil {
			rec.Reset()
		}
		ev, err := tt.do(tt.fill)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := ctx.Stats().Events - before; n != tt.events {
			t.Errorf("%s: the context holds %d more events; want %d", tt.name, n, tt.events)
		}
		want := tt.driver
		if rec != nil {
			want = 2 // device times need both commands' events
		}
		if n := made.Load() - madeBefore; n != want {
			t.Errorf("%s: the backend made %d events; want %d", tt.name, n, want)
		}
		if (ev != nil) != (tt.events > 0) {
			t.Errorf("%s returned the event %v", tt.name, ev)
		}
		if ev != nil {
			if err := errors.Join(ev.Wait(), ev.Release()); err != nil {
				t.Errorf("%s: event: %v", tt.name, err)
			}
		}
		got := make([]int32, 4)
		if err := dst.Read(q, got); err != nil || !slices.Equal(got, []int32{tt.fill, tt.fill, tt.fill, tt.fill}) {
			t.Errorf("%s: dst holds %v (%v); want %d throughout", tt.name, got, err, tt.fill)
		}
		if rec == nil {
			continue
		}
		timed := map[trace.CmdKind]int{}
		for _, e := range rec.Events() {
			if e.Kind == trace.TaskComplete && e.Task.DevEnd > e.Task.DevStart {
				timed[e.Task.Node.Kind]++
			}
		}
		if timed[trace.Fill] != 1 || timed[trace.Copy] != 1 {
			t.Errorf("%s: device times by kind %v, want a fill's and a copy's", tt.name, timed)
		}
	}
}

// TestLaunchAllocs checks that the hot paths allocate nothing on the Go
// heap, on PoCL: a launch without an event, through rt and through the
// kernel spec (scalar arguments once escaped to the heap, one allocation
// each), blocking 4-byte transfers and allocator hits.
func TestLaunchAllocs(t *testing.T) {
	if os.Getenv(trace.EnvVar) != "" {
		t.Skip("tracing is on (" + trace.EnvVar + ")")
	}
	ctx := openCPUConfig(t, rt.Config{})
	q := ctx.Queue()
	k, buf := touchKernel(t, ctx)
	k2 := kernelOf(t, ctx, `__kernel void args3(int a, float b, __global float* c) {}`, "args3")
	fbuf, err := rt.NewBuffer[float32](ctx, 16*16)
	if err != nil {
		t.Fatal(err)
	}
	defer fbuf.Free()
	r := rt.Range2(16, 16).WithLocal(16, 16)
	v := []int32{1}
	tests := []struct {
		name   string
		do     func() error
		allocs float64
	}{
		{"raw.Submit", func() error { return raw.Submit(q, k, rt.Range1(1)) }, 0},
		{"generated Enqueue", func() error { return enqueueTouch(q, buf) }, 0},
		{"generated Enqueue, 13 arguments", func() error { return enqueueBenchStep(q, r, 1, fbuf, fbuf, fbuf) }, 0},
		{"SetArg and Queue.Submit", func() error {
			if err := errors.Join(raw.SetArg(k2, 0, int32(1)), raw.SetArg(k2, 1, float32(2)), raw.SetBuffer(k2, 2, fbuf)); err != nil {
				return err
			}
			return raw.Submit(q, k2, rt.Range1(1))
		}, 0},
		{"Buffer.Write 4 bytes", func() error { return buf.Write(q, v) }, 0},
		{"Buffer.Read 4 bytes", func() error { return buf.Read(q, v) }, 0},
		// An allocation is a new Mem, so that a *Mem kept from an earlier
		// use of the block stays freed (TestOldMemHandle): one object.
		{"allocator hit and Free, tagged", func() error { return allocFree(siteBytes.Alloc(q, 1024)) }, 1},
		{"allocator hit and Free, untagged", func() error { return allocFree(rt.Alloc[byte](q, 1024)) }, 1},
	}
	for _, tt := range tests {
		if err := tt.do(); err != nil { // first use: builds, binds
			t.Fatalf("%s: %v", tt.name, err)
		}
		var err error
		n := testing.AllocsPerRun(200, func() {
			if e := tt.do(); e != nil {
				err = e
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n != tt.allocs {
			t.Errorf("%s: %v heap allocations per call, want %v", tt.name, n, tt.allocs)
		}
		if err := q.Finish(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSetArgUnchanged checks, on the fake driver (which has no one-call
// launch, so that the kernel's record is flushed argument by argument),
// that a launch after setting an argument to the value it already holds
// makes no driver call for it, and that every other setting does: a new
// value, a buffer after a scalar or a local, a local after a buffer.
func TestSetArgUnchanged(t *testing.T) {
	ctx := openFake(t, nil)
	prog, err := raw.Build(ctx, "args", "__kernel void args(__global int *p, int n, __local int *l) {}", "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("args")
	if err != nil {
		t.Fatal(err)
	}
	// Every argument set before the first launch, which refuses one unset.
	if err := errors.Join(raw.SetArg(k, 1, int32(0)), k.SetLocal(2, 32)); err != nil {
		t.Fatal(err)
	}
	a, _ := rt.NewBuffer[int32](ctx, 1)
	b, _ := rt.NewBuffer[int32](ctx, 1)
	tests := []struct {
		name  string
		calls int64
		set   func() error
	}{
		{"buffer a", 3, func() error { return raw.SetBuffer(k, 0, a) }}, // and the two set above
		{"buffer a again", 0, func() error { return raw.SetBuffer(k, 0, a) }},
		{"buffer b", 1, func() error { return raw.SetBuffer(k, 0, b) }},
		{"buffer a after b", 1, func() error { return raw.SetBuffer(k, 0, a) }},
		{"int32 1", 1, func() error { return raw.SetArg(k, 1, int32(1)) }},
		{"int32 1 again", 0, func() error { return raw.SetArg(k, 1, int32(1)) }},
		{"int32 2", 1, func() error { return raw.SetArg(k, 1, int32(2)) }},
		{"uint32 2 (same bits)", 0, func() error { return raw.SetArg(k, 1, uint32(2)) }},
		{"int64 2 (another size)", 1, func() error { return raw.SetArg(k, 1, int64(2)) }},
		{"local", 1, func() error { return k.SetLocal(2, 64) }},
		{"local again", 0, func() error { return k.SetLocal(2, 64) }},
		{"buffer a on the local's index", 1, func() error { return raw.SetBuffer(k, 2, a) }},
		{"local over it", 1, func() error { return k.SetLocal(2, 64) }},
		{"buffer a again after the local", 1, func() error { return raw.SetBuffer(k, 2, a) }},
	}
	for _, tt := range tests {
		before := fakeStats.setArgs.Load()
		if err := tt.set(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if err := raw.Submit(ctx.Queue(), k, rt.Range1(1)); err != nil {
			t.Fatalf("%s: submit: %v", tt.name, err)
		}
		if n := fakeStats.setArgs.Load() - before; n != tt.calls {
			t.Errorf("%s: %d driver calls, want %d", tt.name, n, tt.calls)
		}
	}
}

// TestSetArgReusedHandle frees the buffer a kernel argument holds and
// allocates another that the driver gives the same handle: the kernel must
// set the argument again, since a driver may have resolved the old buffer's
// device address when it was set.
func TestSetArgReusedHandle(t *testing.T) {
	fakeHandles.Lock()
	fakeHandles.reuse, fakeHandles.released = true, nil
	fakeHandles.Unlock()
	t.Cleanup(func() {
		fakeHandles.Lock()
		fakeHandles.reuse, fakeHandles.released = false, nil
		fakeHandles.Unlock()
	})
	ctx := openFake(t, nil)
	prog, err := raw.Build(ctx, "args", "__kernel void args(__global int *p) {}", "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("args")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := rt.NewBuffer[int32](ctx, 1)
	if err := raw.SetBuffer(k, 0, a); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(ctx.Queue(), k, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	b, _ := rt.NewBuffer[int32](ctx, 1)
	before := fakeStats.setArgs.Load()
	if err := raw.SetBuffer(k, 0, b); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(ctx.Queue(), k, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	if n := fakeStats.setArgs.Load() - before; n != 1 {
		t.Errorf("a new buffer with a released buffer's handle: %d driver calls, want 1", n)
	}
}

// The allocation site of TestSpecArgFreedSince.
var (
	touchSite rt.AllocSite[int32]
	_         = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&touchSite), ID: pkg + "touchSite", Name: "touchSite"})
)

// TestSpecArgFreedSince launches a generated-style spec over a buffer, makes
// the buffer unusable without changing the argument's value, and launches
// again with the same buffer: a kernel object that already holds a buffer
// skips setting it again (Kernel.holds), but never for one that was freed
// since, through any of the ways memory dies. On PoCL, whose views are
// sub-buffers.
func TestSpecArgFreedSince(t *testing.T) {
	tests := []struct {
		name string
		// make returns the buffer to launch over and a function that
		// frees it, or what it lies in, or lets the allocator reuse that.
		make func(q *rt.Queue) (rt.Buffer[int32], func() error, error)
	}{
		{"buffer freed", func(q *rt.Queue) (rt.Buffer[int32], func() error, error) {
			b, err := rt.NewBuffer[int32](q.Context(), 16)
			return b, b.Free, err
		}},
		{"view of a freed buffer", func(q *rt.Queue) (rt.Buffer[int32], func() error, error) {
			b, err := rt.NewBuffer[int32](q.Context(), 16)
			if err != nil {
				return b, nil, err
			}
			v, err := b.View(0, 8)
			return v, b.Free, err
		}},
		{"view of a tagged block allocated again", func(q *rt.Queue) (rt.Buffer[int32], func() error, error) {
			b, err := touchSite.Alloc(q, 16)
			if err != nil {
				return b, nil, err
			}
			v, err := b.View(0, 8)
			return v, func() error {
				if err := b.Free(); err != nil {
					return err
				}
				_, err := touchSite.Alloc(q, 16) // the same block, through the same Mem
				return err
			}, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := openCPU(t).Queue()
			b, kill, err := tt.make(q)
			if err != nil {
				t.Fatal(err)
			}
			if err := enqueueTouch(q, b); err != nil {
				t.Fatalf("first launch: %v", err)
			}
			if err := kill(); err != nil {
				t.Fatal(err)
			}
			if err := enqueueTouch(q, b); !errors.Is(err, rt.ErrFreed) {
				t.Errorf("launch after the memory died: %v, want an error wrapping ErrFreed", err)
			}
		})
	}
}

// A second spec in a program of its own, for TestSpecEvictedSince.
var (
	touch2Prog  rt.Program
	_touch2Prog = &codegen.Program{Var: codegen.ProgramVar(&touch2Prog), ID: pkg + "touch2Prog", Name: "touch2Prog",
		Image: "__kernel void touch2(__global int *p) { if (get_global_id(0) == 0) p[0] += 2; }\n"}
	touch2Spec = &codegen.Kernel{ID: pkg + "Touch2", Name: "touch2", Program: _touch2Prog, Params: 1}
	_          = codegen.Register(_touch2Prog)
	_          = codegen.Register(touch2Spec)
)

// TestSpecEvictedSince launches a spec, has the program cache evict its
// program (a threshold of one byte: every build evicts the others), and
// launches it again on the same queue: the queue's memory of the spec's
// kernel object (Queue.specs) must not hand out the evicted, released one,
// but have the program built again.
func TestSpecEvictedSince(t *testing.T) {
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	cc.EvictionThreshold = 1
	ctx := openCPUConfig(t, rt.Config{Cache: &cc})
	q := ctx.Queue()
	out, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Write(q, []int32{0}); err != nil {
		t.Fatal(err)
	}
	enqueueTouch2 := func() error {
		k, err := codegen.Acquire(q, touch2Spec)
		if err != nil {
			return err
		}
		codegen.SetBuffer(k, 0, out)
		return codegen.Submit(q, k, rt.Range1(1), nil)
	}
	for i, launch := range []func() error{
		func() error { return enqueueTouch(q, out) }, // +1
		enqueueTouch2, // +2, evicting touchProg
		func() error { return enqueueTouch(q, out) }, // +1, touchProg built again
	} {
		if err := launch(); err != nil {
			t.Fatalf("launch %d: %v", i, err)
		}
	}
	got := []int32{0}
	if err := out.Read(q, got); err != nil {
		t.Fatal(err)
	}
	if got[0] != 4 {
		t.Errorf("the three launches gave %d, want 4", got[0])
	}
	if s := ctx.Stats().Cache; s.Builds != 3 || s.Evictions < 2 {
		t.Errorf("cache stats %+v: want touchProg built twice and touch2Prog once, with evictions between", s)
	}
}

// TestFillPatternSizes: Fill takes an element of 1, 2, 4, ... 128 bytes as
// its pattern and fills with it, on PoCL; an element of another size is
// refused before any backend, with an error wrapping ErrInvalidArgument,
// directly and in a recorded graph (OpenCL's drivers refused it with a
// bare CL_INVALID_VALUE, CUDA's took it).
func TestFillPatternSizes(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	for _, tc := range []struct {
		name string
		fill func() error
		ok   bool
	}{
		{"1", func() error { return fillAndCheck(q, uint8(7)) }, true},
		{"8", func() error { return fillAndCheck(q, [2]float32{1, 2}) }, true},
		{"16", func() error { return fillAndCheck(q, [4]int32{1, 2, 3, 4}) }, true},
		{"128", func() error { return fillAndCheck(q, [32]uint32{5: 9}) }, true},
		{"3", func() error { return fillAndCheck(q, [3]byte{1, 2, 3}) }, false},
		{"12", func() error { return fillAndCheck(q, [3]float32{1, 2, 3}) }, false},
		{"256", func() error { return fillAndCheck(q, [256]byte{}) }, false},
		{"12 recorded", func() error {
			b, err := rt.NewBuffer[[3]float32](ctx, 4)
			if err != nil {
				return err
			}
			defer b.Free()
			g, err := q.Record("fill", func(rq *rt.Queue) error { return b.Fill(rq, [3]float32{}) })
			if err == nil {
				g.Release()
			}
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fill()
			if tc.ok && err != nil {
				t.Errorf("Fill: %v", err)
			}
			if !tc.ok && !errors.Is(err, rt.ErrInvalidArgument) {
				t.Errorf("Fill: %v, want an error wrapping ErrInvalidArgument", err)
			}
		})
	}
}

// fillAndCheck fills a buffer of 5 elements with v on q and checks that
// each reads back as v.
func fillAndCheck[T comparable](q *rt.Queue, v T) error {
	b, err := rt.NewBuffer[T](q.Context(), 5)
	if err != nil {
		return err
	}
	defer b.Free()
	if err := b.Fill(q, v); err != nil {
		return err
	}
	got := make([]T, 5)
	if err := b.Read(q, got); err != nil {
		return err
	}
	for i, g := range got {
		if g != v {
			return fmt.Errorf("element %d reads %v after the fill, want %v", i, g, v)
		}
	}
	return nil
}
