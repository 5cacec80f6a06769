package rt_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/stats"
)

// budgetOf returns the account of ctx's first device.
func budgetOf(ctx *rt.Context) stats.Budget { return ctx.Stats().Alloc.Budgets[0] }

// The budget of TestMemoryLimit and TestMemoryLimitDriver, and what each
// of their goroutines wants at a time.
const budgetLimit, budgetWant = 64 << 20, 8 << 20

// TestMemoryLimit: with a budget of 64 MiB, 16 goroutines that each want
// 8 MiB at a time, again and again, under AllocContext: the bytes in use
// never exceed the budget (sampled from Stats while they run), and every
// request succeeds, after waits; with the budget full, AllocContext under
// a 10 ms deadline fails with ErrMemoryLimit when the deadline passes,
// and Alloc at once.
func TestMemoryLimit(t *testing.T) {
	memoryLimit(t, openCPUConfig(t, rt.Config{MemoryLimit: budgetLimit}), nil)
}

// A memoryView is a second count of the device memory in use, which
// memoryLimit samples beside Stats.
type memoryView struct {
	// start is called once the context and the goroutines' queues exist,
	// before the goroutines allocate; sample while they run, after each
	// sample of Stats, b; end once every buffer is freed and the blocks
	// held in free lists are released.
	start, end func()
	sample     func(b stats.Budget)
}

// memoryLimit is TestMemoryLimit on ctx, whose Config.MemoryLimit is
// budgetLimit, with view, if not nil, sampled beside Stats.
func memoryLimit(t *testing.T, ctx *rt.Context, view *memoryView) {
	const limit, want, goroutines, rounds = budgetLimit, budgetWant, 16, 8
	n := want / 4
	queues := make([]*rt.Queue, goroutines)
	for g := range queues {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		queues[g] = q
	}
	if view != nil {
		view.start()
	}

	stop := make(chan struct{})
	var most atomic.Int64
	sampled := make(chan int)
	go func() {
		samples := 0
		defer func() { sampled <- samples }()
		for {
			b := budgetOf(ctx)
			if b.Used > most.Load() {
				most.Store(b.Used)
			}
			if b.Limit != limit {
				t.Errorf("Stats reports the limit %d, want %d", b.Limit, limit)
			}
			if view != nil {
				view.sample(b)
			}
			samples++
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g, q := range queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for r := range rounds {
				buf, err := rt.AllocContext[int32](rctx, q, n)
				if err != nil {
					errs <- err
					return
				}
				v := []int32{int32(g), int32(r)}
				got := make([]int32, 2)
				err = errors.Join(buf.WriteAt(q, n-2, v), buf.ReadAt(q, n-2, got))
				if err == nil && (got[0] != v[0] || got[1] != v[1]) {
					t.Errorf("goroutine %d round %d read %v, want %v", g, r, got, v)
				}
				time.Sleep(time.Millisecond) // hold it a while
				if err := errors.Join(err, buf.Free()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("%d samples of Stats", <-sampled)
	close(errs)
	for err := range errs {
		t.Errorf("a request: %v", err)
	}
	b := budgetOf(ctx)
	if m := most.Load(); m > limit || b.Peak > limit {
		t.Errorf("in use reached %d bytes (peak %d), past the limit %d", m, b.Peak, limit)
	}
	if b.Waits == 0 {
		t.Errorf("Stats %+v: no request waited, want %d goroutines of 8 MiB to wait for 64 MiB", b, goroutines)
	}
	t.Logf("after the loop: %+v", b)

	// Fill the budget, then ask past it.
	q := ctx.Queue()
	var held []rt.Buffer[int32]
	for {
		buf, err := rt.Alloc[int32](q, n)
		if errors.Is(err, rt.ErrMemoryLimit) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, buf)
		if len(held)*want > limit {
			t.Fatalf("Alloc served %d requests of %d bytes, past the limit of %d", len(held), want, limit)
		}
	}
	failures := budgetOf(ctx).Failures
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := rt.AllocContext[int32](dctx, q, n)
	took := time.Since(began)
	if !errors.Is(err, rt.ErrMemoryLimit) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, rt.ErrOutOfMemory) {
		t.Errorf("AllocContext with a 10 ms deadline on a full budget: %v, want ErrMemoryLimit (and ErrOutOfMemory) after the deadline", err)
	}
	// Whether the wait lasted until the deadline is dctx's to say, not
	// took's: on a loaded machine the goroutine may be descheduled
	// between WithTimeout and the clock read (took was 8.98 ms once).
	if dctx.Err() == nil {
		t.Errorf("AllocContext with a 10 ms deadline failed after %v, before its deadline", took)
	}
	if took > time.Second {
		t.Errorf("AllocContext with a 10 ms deadline failed after %v", took)
	}
	t.Log(err)
	began = time.Now()
	if _, err := rt.Alloc[int32](q, n); !errors.Is(err, rt.ErrMemoryLimit) {
		t.Errorf("Alloc on a full budget: %v, want ErrMemoryLimit", err)
	}
	if d := time.Since(began); d > 100*time.Millisecond {
		t.Errorf("Alloc on a full budget failed after %v, want at once", d)
	}
	if f := budgetOf(ctx).Failures; f != failures+2 {
		t.Errorf("Stats counts %d refusals, want %d", f, failures+2)
	}
	for _, b := range held {
		if err := b.Free(); err != nil {
			t.Error(err)
		}
	}
	if view != nil {
		if err := ctx.ReleaseHeld(); err != nil {
			t.Fatal(err)
		}
		view.end()
	}
}

// TestMemoryLimitDriver is TestMemoryLimit on the device that DGEN_DEVICE
// selects, with the driver's own count of the device's free memory
// (driver.MemInfoContext: cuMemGetInfo on rt/cuda) sampled beside Stats.
// The bytes the context holds there as the driver counts them (what
// Stats counted when the queues existed, plus what free memory fell by
// since) never exceed the budget by more than the driver's own
// allocations made meanwhile, measured, not guessed: what free memory
// fell by once every buffer is freed and every held block released,
// less what Stats still counts then. It skips where the backend has no
// such query (OpenCL: PoCL, NVIDIA's OpenCL).
func TestMemoryLimitDriver(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{Device: testenv.Device(), MemoryLimit: budgetLimit})
	mc, ok := core.DriverContext(cx(ctx)).(driver.MemInfoContext)
	if !ok {
		t.Skipf("backend %s on %s has no query of the device's free memory (driver.MemInfoContext: rt/cuda's cuMemGetInfo; OpenCL has none)", ctx.Backend(), ctx.Devices()[0])
	}
	memInfo := func() int64 {
		free, _, err := mc.MemInfo(0)
		if err != nil {
			t.Fatal(err)
		}
		return free
	}
	var (
		base, baseUsed int64 // free memory, and Stats' count, when the queues exist
		mu             sync.Mutex
		most, mostAt   int64 // the most held by the driver's count, and Stats' count then
		samples        int
	)
	memoryLimit(t, ctx, &memoryView{
		start: func() { baseUsed, base = budgetOf(ctx).Used, memInfo() },
		sample: func(b stats.Budget) {
			free, _, err := mc.MemInfo(0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			samples++
			if held := baseUsed + base - free; held > most {
				most, mostAt = held, b.Used
			}
		},
		end: func() {
			endUsed, free := budgetOf(ctx).Used, memInfo()
			own := (base - free) - (endUsed - baseUsed)
			mu.Lock()
			defer mu.Unlock()
			t.Logf("%s, backend %s: %d samples of the driver's free memory; the most held by its count %d bytes (Stats then %d), budget %d; "+
				"the driver's own allocations since the queues existed %d bytes (free %d then, %d at the end; Stats %d then, %d at the end)",
				ctx.Devices()[0], ctx.Backend(), samples, most, mostAt, budgetLimit, own, base, free, baseUsed, endUsed)
			if samples == 0 {
				t.Error("no sample of the driver's free memory")
			}
			if most > budgetLimit+max(own, 0) {
				t.Errorf("the driver counted %d bytes held, past the budget %d and the driver's own %d", most, budgetLimit, own)
			}
		},
	})
}

// TestMemoryLimitReturnsHeld: an allocation past the limit first returns
// the blocks held in the device's free lists, so that NewBuffer, which
// asks the driver, gets memory that the allocator holds; a request above
// the limit fails at once, Context form or not, without a wait.
func TestMemoryLimitReturnsHeld(t *testing.T) {
	const limit = 64 << 20
	ctx := openCPUConfig(t, rt.Config{MemoryLimit: limit})
	q := ctx.Queue()
	var bufs []rt.Buffer[byte]
	for range 6 {
		b, err := rt.Alloc[byte](q, 8<<20)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if b := budgetOf(ctx); b.Used < 48<<20 {
		t.Fatalf("after the frees the account is %+v, want the held blocks counted", b)
	}
	big, err := rt.NewBuffer[byte](ctx, 32<<20)
	if err != nil {
		t.Fatalf("NewBuffer of 32 MiB with the rest of the budget held in free lists: %v", err)
	}
	if b := budgetOf(ctx); b.Used > limit {
		t.Errorf("account %+v past the limit", b)
	}
	if err := big.Free(); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(ctx); b.Used != ctx.Stats().Alloc.Total().Held {
		t.Errorf("after every Free the account holds %d bytes, the free lists %d", b.Used, ctx.Stats().Alloc.Total().Held)
	}

	tests := []struct {
		name  string
		alloc func() error
	}{
		{"AllocContext", func() error { _, err := rt.AllocContext[byte](context.Background(), q, limit+1); return err }},
		{"NewBufferContext", func() error { _, err := rt.NewBufferContext[byte](context.Background(), ctx, limit+1); return err }},
		{"Alloc", func() error { _, err := rt.Alloc[byte](q, limit+1); return err }},
	}
	for _, tt := range tests {
		began := time.Now()
		err := tt.alloc()
		if !errors.Is(err, rt.ErrMemoryLimit) {
			t.Errorf("%s above the limit: %v, want ErrMemoryLimit", tt.name, err)
		}
		if d := time.Since(began); d > 100*time.Millisecond {
			t.Errorf("%s above the limit failed after %v, want at once", tt.name, d)
		}
	}
}

// TestMemoryLimitWaitEndsOnClose: an allocation that waits for a free
// fails with ErrClosed when the context closes, and Close does not wait
// for it.
func TestMemoryLimitWaitEndsOnClose(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{MemoryLimit: 8 << 20})
	q := ctx.Queue()
	if _, err := rt.NewBuffer[byte](ctx, 8<<20); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := rt.AllocContext[byte](context.Background(), q, 1<<20)
		done <- err
	}()
	for budgetOf(ctx).Waits == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, rt.ErrClosed) {
			t.Errorf("the waiting allocation after Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting allocation hangs after Close")
	}
}
