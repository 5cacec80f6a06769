package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/raw"
)

// A kernel spec whose launches carry a per-goroutine scalar, and an
// allocation site that goroutines share, registered by hand as generated
// code registers them.
var (
	addProg  rt.Program
	_addProg = &codegen.Program{Var: codegen.ProgramVar(&addProg), ID: pkg + "addProg", Name: "addProg",
		Image: "__kernel void addv(__global int *p, int v) { p[get_global_id(0)] += v; }\n"}
	addSpec    = &codegen.Kernel{ID: pkg + "AddV", Name: "addv", Program: _addProg, Params: 2}
	_          = codegen.Register(_addProg)
	_          = codegen.Register(addSpec)
	sharedSite rt.AllocSite[int32]
	_          = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&sharedSite), ID: pkg + "sharedSite", Name: "sharedSite"})
)

// enqueueAdd does what a generated Enqueue of addSpec does.
func enqueueAdd(q *rt.Queue, p rt.Buffer[int32], v int32) error {
	k, err := codegen.Acquire(q, addSpec)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, p)
	codegen.SetScalar(k, 1, v)
	return codegen.Submit(q, k, rt.Range1(p.Len()), nil)
}

// TestLaunchGoroutines launches one spec from many goroutines at once, on
// queues of their own and on one shared queue, each goroutine with its own
// buffer and scalar: no launch may see another goroutine's arguments.
func TestLaunchGoroutines(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			ctx := openCPU(t)
			const goroutines, launches, n = 8, 40, 64
			var wg sync.WaitGroup
			errs := make([]error, goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[g] = addLoop(ctx, shared, int32(g+1), launches, n)
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// addLoop launches addv launches times over a buffer of its own with the
// scalar v, and checks that every element is launches*v.
func addLoop(ctx *rt.Context, shared bool, v int32, launches, n int) error {
	q := ctx.Queue()
	if !shared {
		var err error
		if q, err = ctx.NewQueue(ctx.Devices()[0]); err != nil {
			return err
		}
	}
	b, err := rt.NewBuffer[int32](ctx, n)
	if err != nil {
		return err
	}
	defer b.Free()
	if err := b.Write(q, make([]int32, n)); err != nil {
		return err
	}
	for range launches {
		if err := enqueueAdd(q, b, v); err != nil {
			return err
		}
	}
	got := make([]int32, n)
	if err := b.Read(q, got); err != nil {
		return err
	}
	for i, x := range got {
		if x != int32(launches)*v {
			return fmt.Errorf("goroutine with v=%d: element %d is %d, want %d", v, i, x, int32(launches)*v)
		}
	}
	return nil
}

// TestPanicInEnqueue: a panic between Acquire and Submit, recovered, must
// leave nothing locked: the next launch of the spec runs.
func TestPanicInEnqueue(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	b, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(q, make([]int32, 4)); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { recover() }()
		k, err := codegen.Acquire(q, addSpec)
		if err != nil {
			t.Fatal(err)
		}
		var s *struct{ V int32 }
		codegen.SetScalar(k, 1, s.V) // a nil spec, as a generated Enqueue on a nil *Spec meets it
	}()
	done := make(chan error, 1)
	go func() { done <- enqueueAdd(q, b, 3) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the launch after a recovered panic did not return in 30 s: the kernel stayed locked")
	}
	got := make([]int32, 4)
	if err := b.Read(q, got); err != nil {
		t.Fatal(err)
	}
	if got[0] != 3 {
		t.Errorf("element 0 is %d, want 3", got[0])
	}
}

// TestSiteServesGoroutines: goroutines that allocate under one site at once
// all reuse blocks after a warm-up: the site holds as many free blocks as
// were in use together, where Futhark's policy (one block per tag,
// Config.AllocPolicy "tagged") releases all but one.
func TestSiteServesGoroutines(t *testing.T) {
	for _, tc := range []struct {
		policy      rt.AllocPolicy
		noNewAllocs bool // after the warm-up
	}{
		{rt.AllocFull, true},
		{rt.AllocBestFit, true},
		{rt.AllocTagged, false},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			ctx := openCPUConfig(t, rt.Config{AllocPolicy: tc.policy})
			const goroutines, rounds, n = 8, 20, 1024
			qs := make([]*rt.Queue, goroutines)
			warm := make([]rt.Buffer[int32], goroutines)
			for g := range qs {
				var err error
				if qs[g], err = ctx.NewQueue(ctx.Devices()[0]); err != nil {
					t.Fatal(err)
				}
				if warm[g], err = sharedSite.Alloc(qs[g], n); err != nil {
					t.Fatal(err)
				}
			}
			for _, b := range warm {
				if err := b.Free(); err != nil {
					t.Fatal(err)
				}
			}
			before := ctx.Stats().Alloc.DriverAllocs
			var wg sync.WaitGroup
			// In the first round every goroutine holds its block until all
			// hold one, as many as the warm-up had in use together, so
			// that the policies differ whatever the scheduler does.
			var together sync.WaitGroup
			together.Add(goroutines)
			errs := make([]error, goroutines)
			for g, q := range qs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range rounds {
						b, err := sharedSite.Alloc(q, n)
						if i == 0 {
							together.Done()
							together.Wait()
						}
						if err == nil {
							err = errors.Join(b.Write(q, make([]int32, n)), b.Free())
						}
						if err != nil {
							errs[g] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			after := ctx.Stats().Alloc.DriverAllocs
			if got := after - before; (got == 0) != tc.noNewAllocs {
				t.Errorf("%d driver allocations after the warm-up; want none: %v", got, tc.noNewAllocs)
			}
		})
	}
}

// TestOldMemHandle: a Buffer, and its *Mem (which rt/codegen and rt/raw
// reach), kept from a freed buffer whose block the allocator has handed
// to another buffer stays freed: freeing it, or binding it to a kernel, is
// an error wrapping ErrFreed and leaves the new owner's memory alone.
func TestOldMemHandle(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	a, err := sharedSite.Alloc(q, 16)
	if err != nil {
		t.Fatal(err)
	}
	old := memOf(a)
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	b, err := sharedSite.Alloc(q, 16) // the same block
	if err != nil {
		t.Fatal(err)
	}
	if s := ctx.Stats().Alloc.Tag(tagOf(t, &sharedSite)); s.Reuses != 1 {
		t.Fatalf("stats %+v: want the second allocation to reuse the block", s)
	}
	if err := old.Free(); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("Free of the old *Mem: %v, want ErrFreed", err)
	}
	prog, err := raw.Build(ctx, "addv", "__kernel void addv(__global int *p, int v) { p[get_global_id(0)] += v; }", "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("addv")
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.SetBuffer(k, 0, a); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("SetBuffer of the old Buffer: %v, want ErrFreed", err)
	}
	want := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := b.Write(q, want); err != nil {
		t.Fatalf("the new owner's Write: %v", err)
	}
	got := make([]int32, 16)
	if err := b.Read(q, got); err != nil {
		t.Fatal(err)
	}
	if !equal(got, want) {
		t.Errorf("the new owner read %v, want %v", got, want)
	}
}

// TestViewFreeRace makes views of buffers while other goroutines free
// them: each View either succeeds or fails with ErrFreed, and a view of a
// freed buffer is unusable, never a crash (run it with -race).
func TestViewFreeRace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alloc func(q *rt.Queue, n int) (rt.Buffer[int32], error)
	}{
		{"driver", func(q *rt.Queue, n int) (rt.Buffer[int32], error) { return rt.NewBuffer[int32](q.Context(), n) }},
		{"site", sharedSite.Alloc},
		{"untagged", rt.Alloc[int32]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openCPU(t)
			q := ctx.Queue()
			for range 100 {
				b, err := tc.alloc(q, 256)
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				var verr, ferr error
				var v rt.Buffer[int32]
				wg.Add(2)
				go func() { defer wg.Done(); v, verr = b.View(128, 64) }() // 512 bytes in: NVIDIA's OpenCL aligns sub-buffers so
				go func() { defer wg.Done(); ferr = b.Free() }()
				wg.Wait()
				if ferr != nil {
					t.Fatalf("Free: %v", ferr)
				}
				if verr != nil {
					if !errors.Is(verr, rt.ErrFreed) {
						t.Fatalf("View racing Free: %v, want nil or ErrFreed", verr)
					}
					continue
				}
				if err := v.Write(q, make([]int32, 64)); !errors.Is(err, rt.ErrFreed) {
					t.Fatalf("Write to a view of a freed buffer: %v, want ErrFreed", err)
				}
				v.Free()
			}
		})
	}
}

// TestHammer drives one context from 8 goroutines at once: launches,
// transfers, views, graph records and launches, and frees of their own and
// of shared buffers, and at last Close while they run. Every call either succeeds or fails with an
// error wrapping rt's sentinels (ErrFreed, ErrClosed); nothing crashes,
// hangs or races (run it with -race).
func TestHammer(t *testing.T) {
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: rt.BackendOpenCL, Device: "cpu"})) // PoCL's, whatever DGEN_DEVICE says
	if err != nil {
		t.Skipf("no PoCL context: %v", err)
	}
	shared, err := sharedSite.Alloc(ctx.Queue(), 256)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines = 8
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	stop := make(chan struct{})
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- hammer(ctx, shared, g, stop)
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := shared.Free(); err != nil && !errors.Is(err, rt.ErrFreed) {
		t.Errorf("free of the shared buffer: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := ctx.Close(); err != nil {
		t.Errorf("Close while goroutines run: %v", err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// hammer runs one goroutine of TestHammer until stop is closed, and returns
// the first error that wraps none of the sentinels a race may bring.
func hammer(ctx *rt.Context, shared rt.Buffer[int32], g int, stop chan struct{}) error {
	expected := func(err error) bool {
		return err == nil || errors.Is(err, rt.ErrFreed) || errors.Is(err, rt.ErrClosed)
	}
	q := ctx.Queue()
	if g%2 == 1 {
		var err error
		if q, err = ctx.NewQueue(ctx.Devices()[0]); !expected(err) {
			return fmt.Errorf("goroutine %d: NewQueue: %w", g, err)
		} else if err != nil {
			return nil
		}
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		own, err := sharedSite.Alloc(q, 64+g)
		if !expected(err) {
			return fmt.Errorf("goroutine %d: Alloc: %w", g, err)
		} else if err != nil {
			return nil // closed
		}
		steps := []func() error{
			func() error { return enqueueAdd(q, own, 1) },
			func() error { return enqueueAdd(q, shared, 1) },
			func() error { return own.Write(q, make([]int32, own.Len())) },
			func() error { return shared.Read(q, make([]int32, 16)) },
			func() error {
				v, err := shared.View(32, 16) // 128 bytes in: PoCL's base address alignment
				if err == nil {
					err = errors.Join(enqueueAdd(q, v, 1), v.Free())
				}
				return err
			},
			func() error {
				g, err := q.Record("hammer", func(rq *rt.Queue) error { return enqueueAdd(rq, own, 1) })
				if err == nil {
					err = errors.Join(g.Launch(q), g.Release())
				}
				return err
			},
			func() error { return q.Finish() },
			func() error { return own.Free() },
		}
		for j, step := range steps {
			if err := step(); !expected(err) {
				return fmt.Errorf("goroutine %d, iteration %d, step %d: %w", g, i, j, err)
			}
		}
	}
}

// TestLaunchFreeRace launches on buffers while other goroutines free them:
// each launch either runs or fails with ErrFreed, never on released memory
// (PoCL aborts the process on a released cl_mem; run it with -race).
func TestLaunchFreeRace(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	for range 200 {
		b, err := rt.NewBuffer[int32](ctx, 64)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var lerr, ferr error
		wg.Add(2)
		go func() { defer wg.Done(); lerr = enqueueAdd(q, b, 1) }()
		go func() { defer wg.Done(); ferr = b.Free() }()
		wg.Wait()
		if ferr != nil {
			t.Fatalf("Free: %v", ferr)
		}
		if lerr != nil && !errors.Is(lerr, rt.ErrFreed) {
			t.Fatalf("launch racing Free: %v, want nil or ErrFreed", lerr)
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestFreeDuringDriverCall frees a buffer while a write to it, or a launch
// over it, is inside the driver (held there by the fake driver's hooks):
// Free returns at once, and the memory is released only after the call
// returns, never under it.
func TestFreeDuringDriverCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(enter, leave chan struct{}) // installs the hook that holds the call
		call func(q *rt.Queue, b rt.Buffer[int32]) error
	}{
		{"write", func(enter, leave chan struct{}) {
			h := func(int64) { enter <- struct{}{}; <-leave }
			fakeWriteHook.Store(&h)
		}, func(q *rt.Queue, b rt.Buffer[int32]) error { return b.Write(q, make([]int32, b.Len())) }},
		{"launch", func(enter, leave chan struct{}) {
			h := func() { enter <- struct{}{}; <-leave }
			fakeLaunchHook.Store(&h)
		}, func(q *rt.Queue, b rt.Buffer[int32]) error { return enqueueAdd(q, b, 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openFake(t, nil)
			q := ctx.Queue()
			b, err := rt.NewBuffer[int32](ctx, 16)
			if err != nil {
				t.Fatal(err)
			}
			if err := enqueueAdd(q, b, 1); err != nil { // builds the program outside the hook
				t.Fatal(err)
			}
			enter, leave := make(chan struct{}), make(chan struct{})
			tc.hold(enter, leave)
			defer fakeWriteHook.Store(nil)
			defer fakeLaunchHook.Store(nil)
			before := fakeStats.afterRelease.Load()
			done := make(chan error, 1)
			go func() { done <- tc.call(q, b) }()
			<-enter
			if err := b.Free(); err != nil {
				t.Errorf("Free during the call: %v", err)
			}
			close(leave)
			if err := <-done; err != nil {
				t.Errorf("the call: %v", err)
			}
			if n := fakeStats.afterRelease.Load() - before; n != 0 {
				t.Errorf("the driver saw %d uses of a released buffer", n)
			}
		})
	}
}

// nineSpecs are nine kernel specs of one kernel: a queue parks instances in
// eight slots, so at least two of them share a slot.
var nineSpecs = func() (specs [9]*codegen.Kernel) {
	for i := range specs {
		specs[i] = codegen.Register(&codegen.Kernel{ID: pkg + "AddV" + string(rune('A'+i)), Name: "addv", Program: _addProg, Params: 2})
	}
	return specs
}()

// TestSpecsShareSlots launches nine specs in turn on one queue: specs that
// share a slot take turns through the pool, every launch gets its own
// arguments, and after the first round nothing is allocated.
func TestSpecsShareSlots(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	b, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(q, make([]int32, 4)); err != nil {
		t.Fatal(err)
	}
	round := func() error {
		for i, spec := range nineSpecs {
			k, err := codegen.Acquire(q, spec)
			if err != nil {
				return err
			}
			codegen.SetBuffer(k, 0, b)
			codegen.SetScalar(k, 1, int32(i+1))
			if err := codegen.Submit(q, k, rt.Range1(4), nil); err != nil {
				return err
			}
		}
		return nil
	}
	if err := round(); err != nil {
		t.Fatal(err)
	}
	var rerr error
	allocs := testing.AllocsPerRun(20, func() {
		if err := round(); err != nil {
			rerr = err
		}
	})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if allocs != 0 {
		t.Errorf("%v heap allocations per round of nine launches, want 0", allocs)
	}
	got := make([]int32, 4)
	if err := b.Read(q, got); err != nil {
		t.Fatal(err)
	}
	if want := int32(45 * 22); got[0] != want { // 1+...+9 per round, 22 rounds
		t.Errorf("element 0 is %d, want %d", got[0], want)
	}
}

// TestCloseWaitsForLaunch holds a launch, and a write, inside the driver
// (the fake driver's hooks) on a queue of their own, each counted in its
// queue's gate rather than the context's: Close must not return, nor
// release anything, until the call has returned; a launch after Close
// fails with ErrClosed.
func TestCloseWaitsForLaunch(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(enter, leave chan struct{})
		call func(q *rt.Queue, b rt.Buffer[int32]) error
	}{
		{"launch", func(enter, leave chan struct{}) {
			h := func() { enter <- struct{}{}; <-leave }
			fakeLaunchHook.Store(&h)
		}, func(q *rt.Queue, b rt.Buffer[int32]) error { return enqueueAdd(q, b, 1) }},
		{"write", func(enter, leave chan struct{}) {
			h := func(int64) { enter <- struct{}{}; <-leave }
			fakeWriteHook.Store(&h)
		}, func(q *rt.Queue, b rt.Buffer[int32]) error { return b.Write(q, make([]int32, b.Len())) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openFake(t, nil)
			q, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				t.Fatal(err)
			}
			b, err := rt.NewBuffer[int32](ctx, 16)
			if err != nil {
				t.Fatal(err)
			}
			if err := enqueueAdd(q, b, 1); err != nil { // builds the program outside the hook
				t.Fatal(err)
			}
			enter, leave := make(chan struct{}), make(chan struct{})
			tc.hold(enter, leave)
			defer fakeWriteHook.Store(nil)
			defer fakeLaunchHook.Store(nil)
			done := make(chan error, 1)
			go func() { done <- tc.call(q, b) }()
			<-enter
			closed := make(chan error, 1)
			go func() { closed <- ctx.Close() }()
			select {
			case err := <-closed:
				t.Fatalf("Close returned (%v) while a call was inside the driver", err)
			case <-time.After(200 * time.Millisecond):
			}
			close(leave)
			if err := <-done; err != nil {
				t.Errorf("the call: %v", err)
			}
			if err := <-closed; err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := enqueueAdd(q, b, 1); !errors.Is(err, rt.ErrClosed) {
				t.Errorf("launch after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestPanicInLaunch: a panic inside a launch's driver call (a backend's
// bug, or a trace subscriber's), recovered by the caller, leaves nothing
// held: the instance is parked again and the next launch runs, the
// buffer's Free releases it, and Close does not wait for the dead call.
func TestPanicInLaunch(t *testing.T) {
	ctx := openFake(t, nil)
	q := ctx.Queue()
	b, err := rt.NewBuffer[int32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := enqueueAdd(q, b, 1); err != nil {
		t.Fatal(err)
	}
	h := func() { panic("driver bug") }
	fakeLaunchHook.Store(&h)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the launch did not panic")
			}
		}()
		enqueueAdd(q, b, 1)
	}()
	fakeLaunchHook.Store(nil)
	if err := enqueueAdd(q, b, 1); err != nil {
		t.Fatalf("launch after the panic: %v", err)
	}
	drv, err := memOf(b).Driver()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if !drv.(*fakeBuffer).released.Load() {
		t.Error("Free after the panic released nothing: the panicking launch's use of the buffer was not ended")
	}
	closed := make(chan error, 1)
	go func() { closed <- ctx.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close hangs after a panic inside a launch")
	}
}
