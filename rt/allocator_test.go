package rt_test

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// Sites registered by hand, as generated code registers them.
var (
	siteA, siteB rt.AllocSite[float32]
	siteBytes    rt.AllocSite[byte]
	unregistered rt.AllocSite[float32]

	_ = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&siteA), ID: "github.com/dgen-go/dgen/rt_test.siteA", Name: "siteA"})
	_ = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&siteB), ID: "github.com/dgen-go/dgen/rt_test.siteB", Name: "siteB"})
	_ = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&siteBytes), ID: "github.com/dgen-go/dgen/rt_test.siteBytes", Name: "siteBytes"})
)

func tagOf[T any](t testing.TB, s *rt.AllocSite[T]) uint32 {
	t.Helper()
	tag := s.Tag()
	if tag == 0 {
		t.Fatal("allocation site not registered")
	}
	return tag
}

func openCPUConfig(t testing.TB, cfg rt.Config) *rt.Context {
	t.Helper()
	if cfg.Device == "" {
		cfg.Device = "cpu"
	}
	ctx, err := rt.OpenConfig(withEnv(t, cfg))
	if err != nil {
		if sel := os.Getenv("DGEN_DEVICE"); sel != "" && sel != cfg.Device && errors.Is(err, rt.ErrNoDevice) {
			t.Skipf("no %q device for this test, which needs one whatever DGEN_DEVICE=%q selects: %v", cfg.Device, sel, err)
		}
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("open PoCL context: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// TestAllocSiteDecisions checks the seed's reuse decisions through rt on
// PoCL: the tag's free block is reused when min <= size <= 2*min.
func TestAllocSiteDecisions(t *testing.T) {
	tests := []struct {
		name         string
		sizes        []int // float32 elements, allocated and freed in turn
		driverAllocs uint64
		reuses       uint64
	}{
		{"same size", []int{1000, 1000, 1000, 1000}, 1, 3},
		{"shrinking within 2x", []int{1000, 800, 500}, 1, 2},
		{"below half", []int{1000, 499}, 2, 0},
		{"growing", []int{1000, 1001}, 2, 0},
		{"tiny rounds to 4 bytes", []int{0, 1, 1}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := openCPU(t)
			q := ctx.Queue()
			for i, n := range tt.sizes {
				b, err := siteA.Alloc(q, n)
				if err != nil {
					t.Fatalf("step %d: Alloc(%d): %v", i, n, err)
				}
				if b.Len() != n {
					t.Fatalf("step %d: Len = %d, want %d", i, b.Len(), n)
				}
				src := make([]float32, n)
				for j := range src {
					src[j] = float32(i*n + j)
				}
				if err := b.Write(q, src); err != nil {
					t.Fatal(err)
				}
				dst := make([]float32, n)
				if err := b.Read(q, dst); err != nil {
					t.Fatal(err)
				}
				if !equal(src, dst) {
					t.Fatalf("step %d: read back differs", i)
				}
				if err := b.Free(); err != nil {
					t.Fatalf("step %d: Free: %v", i, err)
				}
			}
			s := ctx.Stats().Alloc
			ts := s.Tag(tagOf(t, &siteA))
			if ts.DriverAllocs != tt.driverAllocs || ts.Reuses != tt.reuses || ts.Requests != uint64(len(tt.sizes)) {
				t.Errorf("stats %+v, want %d driver allocations and %d reuses", ts, tt.driverAllocs, tt.reuses)
			}
			if ts.Name != "siteA" {
				t.Errorf("tag name %q, want siteA", ts.Name)
			}
			if s.DriverAllocs != tt.driverAllocs {
				t.Errorf("context created %d driver buffers, want %d", s.DriverAllocs, tt.driverAllocs)
			}
			if ts.HeldBlocks != 1 || ts.InUse != 0 {
				t.Errorf("held %d blocks, %d bytes in use; want 1 block, 0 in use", ts.HeldBlocks, ts.InUse)
			}
		})
	}
}

// TestAllocReuseLoop is a time loop that allocates its output each step and
// frees its input: after the first two steps the driver is never called.
func TestAllocReuseLoop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alloc func(q *rt.Queue, n int) (rt.Buffer[float32], error)
	}{
		{"tagged", siteB.Alloc},
		{"untagged", rt.Alloc[float32]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openCPU(t)
			q := ctx.Queue()
			const n = 4096
			in, err := tc.alloc(q, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Write(q, make([]float32, n)); err != nil {
				t.Fatal(err)
			}
			var after uint64
			for step := range 50 {
				out, err := tc.alloc(q, n)
				if err != nil {
					t.Fatal(err)
				}
				if err := in.CopyTo(q, out); err != nil {
					t.Fatal(err)
				}
				if err := in.Free(); err != nil {
					t.Fatal(err)
				}
				in = out
				if step == 1 {
					after = ctx.Stats().Alloc.DriverAllocs
				}
			}
			q.Finish()
			if got := ctx.Stats().Alloc.DriverAllocs; got != after || got > 2 {
				t.Errorf("driver allocations: %d after step 1, %d after 50 steps; want constant, at most 2", after, got)
			}
			if err := in.Free(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAllocFreedErrors(t *testing.T) {
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
	uses := []struct {
		name string
		use  func(b rt.Buffer[float32]) error
	}{
		{"Free", func(b rt.Buffer[float32]) error { return b.Free() }},
		{"Write", func(b rt.Buffer[float32]) error { return b.Write(q, []float32{1}) }},
		{"Read", func(b rt.Buffer[float32]) error { return b.Read(q, make([]float32, 1)) }},
		{"Fill", func(b rt.Buffer[float32]) error { return b.Fill(q, 1) }},
		{"SetBuffer", func(b rt.Buffer[float32]) error { return raw.SetBuffer(k, 1, b) }},
	}
	for _, alloc := range []struct {
		name  string
		alloc func(q *rt.Queue, n int) (rt.Buffer[float32], error)
	}{{"tagged", siteA.Alloc}, {"untagged", rt.Alloc[float32]}} {
		for _, u := range uses {
			t.Run(alloc.name+"/"+u.name, func(t *testing.T) {
				old, err := alloc.alloc(q, 256)
				if err != nil {
					t.Fatal(err)
				}
				stale := old // a copy of the handle
				if err := old.Free(); err != nil {
					t.Fatal(err)
				}
				if err := u.use(stale); !errors.Is(err, rt.ErrFreed) {
					t.Errorf("%s after Free: %v, want ErrFreed", u.name, err)
				}
				// The block is reused by a new allocation; the stale handle
				// still fails and does not disturb the new holder.
				before := ctx.Stats().Alloc.Tag(0).Reuses + ctx.Stats().Alloc.Tag(tagOf(t, &siteA)).Reuses
				cur, err := alloc.alloc(q, 256)
				if err != nil {
					t.Fatal(err)
				}
				if after := ctx.Stats().Alloc.Tag(0).Reuses + ctx.Stats().Alloc.Tag(tagOf(t, &siteA)).Reuses; after != before+1 {
					t.Fatalf("second allocation was not a reuse")
				}
				want := make([]float32, 256)
				for i := range want {
					want[i] = float32(i)
				}
				if err := cur.Write(q, want); err != nil {
					t.Fatal(err)
				}
				if err := u.use(stale); !errors.Is(err, rt.ErrFreed) {
					t.Errorf("%s of a stale handle after reuse: %v, want ErrFreed", u.name, err)
				}
				got := make([]float32, 256)
				if err := cur.Read(q, got); err != nil {
					t.Fatalf("new holder after stale use: %v", err)
				}
				if !equal(got, want) {
					t.Errorf("new holder's data changed by the stale handle")
				}
				if err := cur.Free(); err != nil {
					t.Fatalf("free new holder: %v", err)
				}
				if err := cur.Free(); !errors.Is(err, rt.ErrFreed) {
					t.Errorf("double free: %v, want ErrFreed", err)
				}
			})
		}
	}
	st := ctx.Stats().Alloc
	if tot := st.Total(); tot.InUse != 0 || tot.HeldBlocks != 2 {
		t.Errorf("after the ErrFreed cases: %d bytes in use, %d blocks held; want 0 and 2 (one per pool)\n%v", tot.InUse, tot.HeldBlocks, st)
	}
}

func TestAllocArgumentErrors(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	max := ctx.Devices()[0].MaxAllocSize
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"unregistered site", func() error { _, err := unregistered.Alloc(q, 4); return err }, rt.ErrNotGenerated},
		{"nil queue", func() error { _, err := siteA.Alloc(nil, 4); return err }, rt.ErrInvalidArgument},
		{"negative length", func() error { _, err := siteA.Alloc(q, -1); return err }, rt.ErrInvalidArgument},
		{"above MaxAllocSize tagged", func() error { _, err := siteBytes.Alloc(q, int(max)+1); return err }, rt.ErrTooLarge},
		{"above MaxAllocSize untagged", func() error { _, err := rt.Alloc[byte](q, int(max)+1); return err }, rt.ErrTooLarge},
		{"untagged nil queue", func() error { _, err := rt.Alloc[int32](nil, 4); return err }, rt.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	if n := ctx.Stats().Alloc.DriverAllocs; n != 0 {
		t.Errorf("%d driver allocations for failed requests, want 0", n)
	}
}

func TestAllocReleaseHeldBoundAndClose(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{AllocMaxHeld: 96 << 10})
	q := ctx.Queue()
	// Three 32 KiB requests, freed: one tagged block of 32 KiB, two untagged
	// ones of their size class's 40959 bytes. The bound of 96 KiB releases
	// the least recently freed, the tagged one.
	var bufs []rt.Buffer[byte]
	for _, s := range []*rt.AllocSite[byte]{&siteBytes} {
		b, err := s.Alloc(q, 32<<10)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	for range 2 {
		b, err := rt.Alloc[byte](q, 32<<10)
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
	tot := ctx.Stats().Alloc.Total()
	if tot.Held != 2*40959 || tot.DriverReleases != 1 || ctx.Stats().Alloc.Tag(tagOf(t, &siteBytes)).HeldBlocks != 0 {
		t.Errorf("with MaxHeld 96 KiB: held %d bytes, %d released; want 81918, 1 released (the tagged block)", tot.Held, tot.DriverReleases)
	}
	if err := ctx.ReleaseHeld(); err != nil {
		t.Fatal(err)
	}
	s := ctx.Stats().Alloc
	if tot := s.Total(); tot.Held != 0 || tot.HeldBlocks != 0 {
		t.Errorf("after ReleaseHeld: %d bytes in %d blocks held", tot.Held, tot.HeldBlocks)
	}
	if s.DriverAllocs != s.DriverReleases {
		t.Errorf("after ReleaseHeld: %d driver buffers created, %d released", s.DriverAllocs, s.DriverReleases)
	}
	// Close releases buffers in use and held alike; the handles go stale.
	live, err := siteA.Alloc(q, 100)
	if err != nil {
		t.Fatal(err)
	}
	held, err := rt.Alloc[float32](q, 100)
	if err != nil {
		t.Fatal(err)
	}
	held.Free()
	plain, err := rt.NewBuffer[float32](ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	plain.Free()
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	s = ctx.Stats().Alloc
	if s.DriverAllocs != s.DriverReleases {
		t.Errorf("after Close: %d driver buffers created, %d released\n%v", s.DriverAllocs, s.DriverReleases, s)
	}
	if _, err := memOf(live).Driver(); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("use of a buffer after Close: %v, want ErrFreed", err)
	}
	if err := live.Free(); err != nil {
		t.Errorf("Free after Close: %v, want nil", err)
	}
	if _, err := siteA.Alloc(q, 1); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("Alloc after Close: %v, want ErrClosed", err)
	}
}

func TestAllocSeedPolicy(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{AllocPolicy: rt.AllocTagged})
	q := ctx.Queue()
	for range 3 {
		b, err := rt.Alloc[float32](q, 1000)
		if err != nil {
			t.Fatal(err)
		}
		b.Free()
	}
	if s := ctx.Stats().Alloc; s.DriverAllocs != 3 || s.DriverReleases != 3 {
		t.Errorf("seed policy, untagged: %d allocations, %d releases; want 3 and 3", s.DriverAllocs, s.DriverReleases)
	}
	if _, err := rt.OpenConfig(withEnv(t, rt.Config{Device: "cpu", AllocPolicy: rt.AllocPolicy(9)})); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("policy lifo: %v, want ErrInvalidArgument", err)
	}
}

// TestAllocConcurrent allocates, writes, reads back and frees from several
// goroutines over two tags and the pool; run it with -race. Every live
// buffer holds its owner's pattern: no block is handed out twice.
func TestAllocConcurrent(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	sites := []func(*rt.Queue, int) (rt.Buffer[float32], error){siteA.Alloc, siteB.Alloc, rt.Alloc[float32]}
	var wg sync.WaitGroup
	var bad atomic.Int32
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				n := 64 + (g*7+i)%64
				b, err := sites[(g+i)%len(sites)](q, n)
				if err != nil {
					t.Error(err)
					return
				}
				src := make([]float32, n)
				for j := range src {
					src[j] = float32(g*1e6 + i*1e3 + j)
				}
				if err := b.Write(q, src); err != nil {
					t.Error(err)
					return
				}
				dst := make([]float32, n)
				if err := b.Read(q, dst); err != nil {
					t.Error(err)
					return
				}
				if !equal(src, dst) {
					bad.Add(1)
				}
				if err := b.Free(); err != nil {
					t.Error(err)
				}
				if err := b.Free(); !errors.Is(err, rt.ErrFreed) {
					t.Errorf("double free: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d buffers read back another goroutine's data", bad.Load())
	}
	if tot := ctx.Stats().Alloc.Total(); tot.Requests != 240 || tot.InUse != 0 || tot.Reuses == 0 {
		t.Errorf("stats %+v: want 240 requests, none in use, some reuses", tot)
	}
}

// faulty is a backend over OpenCL whose device has a simulated capacity:
// a driver buffer that would exceed it fails with
// CL_MEM_OBJECT_ALLOCATION_FAILURE, at creation or, with lazy set, at its
// first use as NVIDIA's driver does.
type faulty struct {
	capacity int64
	lazy     bool
	used     atomic.Int64
}

func (f *faulty) Platforms() ([]driver.PlatformInfo, error) { return opencl.Backend{}.Platforms() }

func (f *faulty) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := opencl.Backend{}.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return &faultyCtx{Context: c, f: f}, nil
}

var oom = &rt.DeviceError{Call: "clCreateBuffer", Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Kind: rt.ErrOutOfMemory}

type faultyCtx struct {
	driver.Context
	f *faulty
}

type faultyBuf struct {
	driver.Buffer
	f       *faulty
	size    int64
	overrun bool // lazy: fails at first use
}

func (c *faultyCtx) NewBuffer(size int64) (driver.Buffer, error) {
	over := c.f.used.Add(size) > c.f.capacity
	if over && !c.f.lazy {
		c.f.used.Add(-size)
		return nil, oom
	}
	b, err := c.Context.NewBuffer(size)
	if err != nil {
		c.f.used.Add(-size)
		return nil, err
	}
	return &faultyBuf{Buffer: b, f: c.f, size: size, overrun: over}, nil
}

func (b *faultyBuf) Release() error {
	b.f.used.Add(-b.size)
	return b.Buffer.Release()
}

func (c *faultyCtx) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	q, err := c.Context.NewQueue(dev, profiling)
	return faultyQueue{q}, err
}

type faultyQueue struct{ driver.Queue }

func unwrap(b driver.Buffer) (driver.Buffer, error) {
	if fb, ok := b.(*faultyBuf); ok {
		if fb.overrun {
			return nil, &rt.DeviceError{Call: "clEnqueueWriteBuffer", Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Kind: rt.ErrOutOfMemory}
		}
		return fb.Buffer, nil
	}
	return b, nil
}

func (q faultyQueue) WriteBuffer(b driver.Buffer, blocking bool, off, size int64, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	d, err := unwrap(b)
	if err != nil {
		return nil, err
	}
	return q.Queue.WriteBuffer(d, blocking, off, size, src, wait)
}

func (q faultyQueue) ReadBuffer(b driver.Buffer, blocking bool, off, size int64, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	d, err := unwrap(b)
	if err != nil {
		return nil, err
	}
	return q.Queue.ReadBuffer(d, blocking, off, size, dst, wait)
}

var faultyN atomic.Int32

func openFaulty(t *testing.T, f *faulty) *rt.Context {
	name := fmt.Sprintf("faulty%d", faultyN.Add(1))
	driver.Register(name, f)
	return openCPUConfig(t, rt.Config{Backend: rt.Backend(name)})
}

// TestAllocOutOfMemory checks release-and-retry and the typed error when
// nothing helps, with the driver failing at creation and lazily at first
// use (which the residency write must catch).
func TestAllocOutOfMemory(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			f := &faulty{capacity: 3 << 20, lazy: lazy}
			ctx := openFaulty(t, f)
			q := ctx.Queue()
			a, err := siteBytes.Alloc(q, 2<<20)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Free(); err != nil { // held under siteBytes
				t.Fatal(err)
			}
			// 2 MiB more does not fit beside the held block: the allocator
			// releases it and retries.
			b, err := siteA.Alloc(q, (2<<20)/4)
			if err != nil {
				t.Fatalf("allocation that fits after releasing held blocks: %v", err)
			}
			st := ctx.Stats().Alloc
			if st.Devices[0].OOMRetries != 1 || st.Tag(tagOf(t, &siteBytes)).HeldBlocks != 0 {
				t.Errorf("after retry: %d retries, %d blocks held under siteBytes; want 1 and 0", st.Devices[0].OOMRetries, st.Tag(tagOf(t, &siteBytes)).HeldBlocks)
			}
			if err := b.Write(q, []float32{1, 2}); err != nil {
				t.Errorf("use of the retried allocation: %v", err)
			}
			// Nothing held and still too large: a typed error.
			_, err = siteBytes.Alloc(q, 2<<20)
			var oe *alloc.OutOfMemoryError
			if !errors.Is(err, rt.ErrOutOfMemory) || !errors.As(err, &oe) {
				t.Fatalf("allocation beyond capacity: %v, want ErrOutOfMemory and *alloc.OutOfMemoryError", err)
			}
			if oe.InUse != 2<<20 || oe.Name != "siteBytes" {
				t.Errorf("OutOfMemoryError %+v", oe)
			}
			// The pool is intact: b still works, and freeing it lets the
			// failed request through.
			if err := b.Free(); err != nil {
				t.Fatal(err)
			}
			c, err := siteBytes.Alloc(q, 2<<20)
			if err != nil {
				t.Fatalf("after freeing: %v", err)
			}
			c.Free()
			if s := ctx.Stats().Alloc; s.DriverAllocs-s.DriverReleases != 1 { // c's block, held
				t.Errorf("%d driver buffers live, want 1\n%v", s.DriverAllocs-s.DriverReleases, s)
			}
		})
	}
}
