package progcache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	_ "github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/trace"
)

// The tests build real programs with the OpenCL backend on the CPU device
// (PoCL); the builder counts what the cache asks of it and injects the
// failures a real device gives only rarely (out of memory, a transient
// error), and delays that make goroutines meet.

// testKernel is a real kernel object that counts its releases.
type testKernel struct {
	driver.Kernel
	releases atomic.Int32
}

func (k *testKernel) Release() error {
	k.releases.Add(1)
	return k.Kernel.Release()
}

// testBuilder builds through a real driver context.
type testBuilder struct {
	ctx driver.Context

	builds, loads, kernels atomic.Int64

	mu         sync.Mutex
	delay      time.Duration // before every build
	buildErrs  []error       // errors of the next builds, in order
	kernelErrs []error       // errors of the next kernel creations, in order
	// beforeKernel, if set, runs before the next kernel creation (once):
	// what another goroutine does between a program's build and the
	// creation of its kernel object.
	beforeKernel func()
}

func pop(errs *[]error) error {
	if len(*errs) == 0 {
		return nil
	}
	err := (*errs)[0]
	*errs = (*errs)[1:]
	return err
}

func (b *testBuilder) Enter(*Image) error { return nil }
func (b *testBuilder) Exit()              {}

func (b *testBuilder) Build(name, source, options string) (driver.Program, error) {
	b.builds.Add(1)
	b.mu.Lock()
	d, err := b.delay, pop(&b.buildErrs)
	b.mu.Unlock()
	time.Sleep(d)
	if err == nil {
		var p driver.Program
		if p, err = b.ctx.BuildProgram(source, options); err == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("build program %q: %w", name, err)
}

func (b *testBuilder) Load(name string, binaries [][]byte, options string) (driver.Program, error) {
	b.loads.Add(1)
	return b.ctx.LoadProgram(binaries, options)
}

func (b *testBuilder) ReleaseKernel(k *testKernel) error { return k.Release() }

func (b *testBuilder) NewKernel(p driver.Program, program, name string) (*testKernel, error) {
	b.kernels.Add(1)
	b.mu.Lock()
	err, hook := pop(&b.kernelErrs), b.beforeKernel
	b.beforeKernel = nil
	b.mu.Unlock()
	if hook != nil {
		hook()
	}
	if err != nil {
		return nil, err
	}
	k, err := p.NewKernel(name)
	if err != nil {
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, program, err)
	}
	return &testKernel{Kernel: k}, nil
}

// cpuDevice returns the first CPU device of the OpenCL backend.
func cpuDevice(t testing.TB) driver.DeviceInfo {
	t.Helper()
	b, err := driver.Lookup("opencl")
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := b.Platforms() // an error here (no platform) is no CPU device
	for _, p := range ps {
		for _, d := range p.Devices {
			if d.Type == driver.DeviceCPU {
				return d
			}
		}
	}
	if os.Getenv("DGEN_DEVICE") == "" { // as internal/testenv, which imports rt and so this package
		t.Skip("no OpenCL CPU device for this test: install PoCL (apt-get install pocl-opencl-icd)")
	}
	t.Fatal("no OpenCL CPU device: install PoCL (scripts/deps.sh)")
	return driver.DeviceInfo{}
}

// newCache returns a cache over a real context on the CPU device; with
// disk, the persistent cache is in a temporary directory. The cache is
// closed at the end of the test unless the test closes it.
func newCache(t testing.TB, cfg Config, disk bool) (*Cache[*testKernel], *testBuilder) {
	t.Helper()
	dev := cpuDevice(t)
	b, _ := driver.Lookup("opencl")
	dc, err := b.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		t.Fatal(err)
	}
	if disk {
		if cfg.Disk, err = diskcache.Open(diskcache.DefaultConfig(t.TempDir())); err != nil {
			t.Fatal(err)
		}
		cfg.Devices = []diskcache.Device{{Platform: dev.Platform, Name: dev.Name, Version: dev.Version, DriverVersion: dev.DriverVersion}}
	}
	tb := &testBuilder{ctx: dc}
	c := new(Cache[*testKernel])
	c.Init(tb, cfg)
	t.Cleanup(func() {
		for _, err := range c.Close() {
			t.Errorf("close: %v", err)
		}
		dc.Release()
	})
	return c, tb
}

// uniqueImage returns an image of a kernel "fill" that writes value,
// made unique by a comment so that no earlier cache holds it.
func uniqueImage(id, value string) *Image {
	src := fmt.Sprintf("// %x\n__kernel void fill(__global int *out) { out[get_global_id(0)] = %s; }\n", rand.Uint64(), value)
	return &Image{ID: id, Source: src}
}

// within runs f and fails the test if it does not return within 30
// seconds, so that a deadlock is a failure, not a hang.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return within 30 seconds: deadlock", what)
	}
}

// TestOneBuild checks that goroutines asking at once for a program and a
// kernel of it build the program once and share one kernel object.
func TestOneBuild(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			c, b := newCache(t, Config{InMemory: true}, disk)
			b.delay = 50 * time.Millisecond
			img := uniqueImage("test.Fill", "7")
			key := NewKernelKey(img, "fill")
			const n = 64
			var wg sync.WaitGroup
			cks := make([]*Kernel[*testKernel], n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						cks[i], errs[i] = c.Kernel(key, 0)
						return
					}
					var p driver.Program
					if p, _, errs[i] = c.Program(img); errs[i] == nil {
						errs[i] = p.Release()
					}
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("goroutine %d: %v", i, err)
				}
			}
			if got := b.builds.Load(); got != 1 {
				t.Errorf("%d builds, want 1", got)
			}
			if got := b.kernels.Load(); got != 1 {
				t.Errorf("%d kernel objects, want 1", got)
			}
			if s := c.Stats(); s.Builds != 1 || s.Programs != 1 {
				t.Errorf("stats %+v, want 1 build and 1 program", s)
			}
			for i := 0; i < n; i += 2 {
				if cks[i] != cks[0] {
					t.Fatalf("goroutine %d got another kernel", i)
				}
			}
		})
	}
}

// TestProgramFromDisk checks that a second cache over the same directory
// loads the program instead of building it.
func TestProgramFromDisk(t *testing.T) {
	dir := t.TempDir()
	img := uniqueImage("test.Disk", "1")
	for i, want := range []struct{ builds, loads int64 }{{1, 0}, {0, 1}} {
		c, b := newCache(t, Config{InMemory: true}, false)
		disk, err := diskcache.Open(diskcache.DefaultConfig(dir))
		if err != nil {
			t.Fatal(err)
		}
		dev := cpuDevice(t)
		c.cfg.Disk, c.cfg.Devices = disk, []diskcache.Device{{Platform: dev.Platform, Name: dev.Name, Version: dev.Version, DriverVersion: dev.DriverVersion}}
		p, _, err := c.Program(img)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
		if b.builds.Load() != want.builds || b.loads.Load() != want.loads {
			t.Errorf("cache %d: %d builds, %d loads; want %d, %d", i, b.builds.Load(), b.loads.Load(), want.builds, want.loads)
		}
		if s := c.Stats(); s.DiskHits != want.loads {
			t.Errorf("cache %d: stats %+v, want %d disk hits", i, s, want.loads)
		}
	}
}

// TestBuildErrorToEveryWaiter checks that a compile error reaches every
// goroutine that waited for the build, and is stored.
func TestBuildErrorToEveryWaiter(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	b.delay = 50 * time.Millisecond
	img := uniqueImage("test.Broken", "undeclared_identifier")
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = c.Program(img)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, driver.ErrBuildFailed) {
			t.Fatalf("goroutine %d: %v, want ErrBuildFailed", i, err)
		}
		if err.Error() != errs[0].Error() {
			t.Fatalf("goroutine %d: message %q differs from %q", i, err, errs[0])
		}
		var de *driver.Error
		if !errors.As(err, &de) || de.Log == "" {
			t.Fatalf("goroutine %d: no build log in %v", i, err)
		}
	}
	if _, _, err := c.Program(img); err == nil || err.Error() != errs[0].Error() {
		t.Errorf("again: %v", err)
	}
	if got := b.builds.Load(); got != 1 {
		t.Errorf("%d builds, want 1", got)
	}
	if s := c.Stats(); s.BuildErrors != 1 {
		t.Errorf("stats %+v, want 1 build error", s)
	}
}

// TestTransientFailureRetried checks that a failure that is not a build
// error fails the builder only: the waiters build again.
func TestTransientFailureRetried(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	transient := &driver.Error{Call: "clBuildProgram", Code: -36, Name: "CL_INVALID_COMMAND_QUEUE"}
	b.delay, b.buildErrs = 200*time.Millisecond, []error{transient}
	img := uniqueImage("test.Flaky", "1")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _, err := c.Program(img)
			if err == nil {
				p.Release()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			if !errors.Is(err, transient) {
				t.Errorf("error %v, want the injected one", err)
			}
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d goroutines failed, want 1 (the builder): %v", failed, errs)
	}
	if got := b.builds.Load(); got != 2 {
		t.Errorf("%d builds, want 2", got)
	}
	if s := c.Stats(); s.Retries < 1 {
		t.Errorf("stats %+v: no retry", s)
	}
}

// TestLRUCascade checks eviction in least-recently-used order above the
// threshold, with the evicted program's kernels and its trace events.
func TestLRUCascade(t *testing.T) {
	// Size the threshold so that any two of the three programs fit and
	// all three do not.
	imgs := map[string]*Image{}
	keys := map[string]*KernelKey{}
	probe, _ := newCache(t, Config{}, false)
	var total int64
	for i, name := range []string{"A", "B", "C"} {
		imgs[name] = uniqueImage("test."+name, fmt.Sprint(i+1))
		keys[name] = NewKernelKey(imgs[name], "fill")
		p, _, err := probe.Program(imgs[name])
		if err != nil {
			t.Fatal(err)
		}
		bins, err := p.Binaries()
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(bins[0]))
		p.Release()
	}
	var (
		mu     sync.Mutex
		events []string
		log    strings.Builder
	)
	c, b := newCache(t, Config{InMemory: true, EvictionThreshold: total - 1, Hooks: Hooks{
		Event: func(ev trace.Cache) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprint(ev.Op, " ", ev.Program))
		},
		Log: &log,
	}}, false)
	ckA, err := c.Kernel(keys["A"], 0)
	if err != nil {
		t.Fatal(err)
	}
	ckB, err := c.Kernel(keys["B"], 0)
	if err != nil {
		t.Fatal(err)
	}
	// A is used again through Program: B is now least recently used.
	if p, _, err := c.Program(imgs["A"]); err != nil {
		t.Fatal(err)
	} else {
		p.Release()
	}
	ckC, err := c.Kernel(keys["C"], 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Evictions != 1 || s.Programs != 2 {
		t.Fatalf("stats %+v, want 1 eviction and 2 programs", s)
	}
	if !ckB.Doomed() {
		t.Errorf("evicted B's kernel is not doomed")
	}
	if n := ckB.Object().releases.Load(); n != 1 {
		t.Errorf("evicted B's kernel released %d times, want 1", n)
	}
	for name, ck := range map[string]*Kernel[*testKernel]{"A": ckA, "C": ckC} {
		if ck.Doomed() || ck.Object().releases.Load() != 0 {
			t.Fatalf("%s: doomed %v, released %d times; want neither", name, ck.Doomed(), ck.Object().releases.Load())
		}
	}
	builds := b.builds.Load()
	if ck, err := c.Kernel(keys["A"], 0); err != nil || ck != ckA {
		t.Errorf("A: %p, %v; want the cached kernel %p", ck, err, ckA)
	}
	if b.builds.Load() != builds {
		t.Errorf("A was rebuilt")
	}
	// B comes back by building again, with a new kernel; its fast-cache
	// entry went with the program.
	if ck, err := c.Kernel(keys["B"], 0); err != nil || ck == ckB {
		t.Fatalf("B: %p, %v; want a new kernel", ck, err)
	}
	if b.builds.Load() != builds+1 {
		t.Errorf("B: %d builds, want 1", b.builds.Load()-builds)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(events, "; "); !strings.Contains(got, "memory_hit test.A") || !strings.Contains(got, "eviction test.B") {
		t.Errorf("trace events %q: want a memory hit of A and the eviction of B", got)
	}
	if !strings.Contains(log.String(), "dgen cache: evict test.B") {
		t.Errorf("log %q: want the eviction of B", log.String())
	}
}

// TestOutOfMemoryFlush checks that out of memory while building a program
// evicts every program and retries once.
func TestOutOfMemoryFlush(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	var cks []*Kernel[*testKernel]
	for i := range 2 {
		ck, err := c.Kernel(NewKernelKey(uniqueImage(fmt.Sprint("test.P", i), "1"), "fill"), 0)
		if err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
	}
	b.builds.Store(0)
	b.buildErrs = []error{&driver.Error{Call: "clBuildProgram", Code: -5, Name: "CL_OUT_OF_RESOURCES", Kind: driver.ErrOutOfMemory}}
	p, _, err := c.Program(uniqueImage("test.AfterOOM", "9"))
	if err != nil {
		t.Fatalf("build after out of resources: %v", err)
	}
	defer p.Release()
	if got := b.builds.Load(); got != 2 {
		t.Errorf("%d builds, want 2 (failed, retried)", got)
	}
	if s := c.Stats(); s.OOMFlushes != 1 || s.Programs != 1 || s.Evictions != 2 {
		t.Errorf("stats %+v, want 1 flush, 2 evictions, 1 program left", s)
	}
	for i, ck := range cks {
		if !ck.Doomed() || ck.Object().releases.Load() != 1 {
			t.Errorf("kernel %d after the flush: doomed %v, released %d times; want doomed, released once", i, ck.Doomed(), ck.Object().releases.Load())
		}
	}
}

// TestKernelCreatedOnce checks that racing first uses of a kernel create
// one kernel object, and that a kernel error is stored rather than asked
// of the driver again.
func TestKernelCreatedOnce(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	img := uniqueImage("test.Once", "5")
	if p, _, err := c.Program(img); err != nil { // built, no kernel yet
		t.Fatal(err)
	} else {
		p.Release()
	}
	key := NewKernelKey(img, "fill")
	const n = 8
	cks := make([]*Kernel[*testKernel], n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cks[i], errs[i] = c.Kernel(key, 0)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || cks[i] != cks[0] {
			t.Errorf("caller %d: %p, %v; want %p", i, cks[i], errs[i], cks[0])
		}
	}
	if got := b.kernels.Load(); got != 1 {
		t.Errorf("%d kernel objects created for %d racing first uses, want 1", got, n)
	}
	b.kernels.Store(0)
	missing := NewKernelKey(img, "no_such_kernel")
	for range 2 {
		if _, err := c.Kernel(missing, 0); !errors.Is(err, driver.ErrNoKernel) {
			t.Errorf("missing kernel: %v, want ErrNoKernel", err)
		}
	}
	if got := b.kernels.Load(); got != 1 {
		t.Errorf("%d kernel creations asked of the driver for a missing kernel asked for twice, want 1", got)
	}
}

// TestKernelOutOfMemoryFlush checks that out of memory while creating a
// kernel evicts the other programs and retries, and that the kernel's own
// program stays.
func TestKernelOutOfMemoryFlush(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	if p, _, err := c.Program(uniqueImage("test.OOMOther", "6")); err != nil {
		t.Fatal(err)
	} else {
		p.Release()
	}
	b.kernelErrs = []error{&driver.Error{Call: "clCreateKernel", Code: -5, Name: "CL_OUT_OF_RESOURCES", Kind: driver.ErrOutOfMemory}}
	ck, err := c.Kernel(NewKernelKey(uniqueImage("test.OOMKernel", "7"), "fill"), 0)
	if err != nil {
		t.Fatalf("kernel after one out-of-memory: %v", err)
	}
	if ck.Doomed() {
		t.Errorf("the kernel made after the flush is doomed")
	}
	if s := c.Stats(); s.OOMFlushes != 1 || s.Programs != 1 {
		t.Errorf("stats %+v: want 1 out-of-memory flush and only the kernel's program left", s)
	}
}

// TestCloseReleasesKernels checks that Close does not wait for a kernel
// that a goroutine holds (KernelHeld), and releases every kernel once, the
// held one too, which is doomed from then on.
func TestCloseReleasesKernels(t *testing.T) {
	c, _ := newCache(t, Config{InMemory: true}, false)
	ck, err := c.Kernel(NewKernelKey(uniqueImage("test.Close", "3"), "fill"), 0)
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.KernelHeld(t.Context(), NewKernelKey(uniqueImage("test.CloseHeld", "4"), "fill"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	within(t, "Close while a kernel is held", func() { errs = c.Close() })
	if len(errs) > 0 {
		t.Errorf("close: %v", errs)
	}
	c.Unhold(held)
	for name, k := range map[string]*Kernel[*testKernel]{"kept": ck, "held": held} {
		if n := k.Object().releases.Load(); n != 1 || !k.Doomed() {
			t.Errorf("%s kernel after Close: released %d times, doomed %v; want once, doomed", name, n, k.Doomed())
		}
	}
	if _, _, err := c.Program(uniqueImage("test.AfterClose", "1")); !errors.Is(err, ErrClosed) {
		t.Errorf("Program after Close: %v, want ErrClosed", err)
	}
}

// TestHitAllocatesNothing checks the fast path's promise.
func TestHitAllocatesNothing(t *testing.T) {
	c, _ := newCache(t, Config{InMemory: true}, false)
	key := NewKernelKey(uniqueImage("test.Hit", "1"), "fill")
	if _, err := c.Kernel(key, 0); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { c.Kernel(key, 0) }); n != 0 {
		t.Errorf("hit: %v allocations, want 0", n)
	}
	if s := c.Stats(); s.KernelMisses != 1 {
		t.Errorf("stats %+v, want 1 kernel miss", s)
	}
}

// TestSpecSets checks that each set of specialization-constant values
// builds its own program once, that an image sees only the constants it
// names, and that setting an earlier set again finds its kernel.
func TestSpecSets(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	img := uniqueImage("test.Spec", "N * 2")
	img.SpecConsts = []SpecValue{{Name: "N", Value: "1"}}
	key := NewKernelKey(img, "fill")
	first := map[string]*Kernel[*testKernel]{}
	for _, step := range []struct {
		name, value string // value "" clears name
		builds      int64
	}{
		{"N", "", 1},
		{"N", "3", 2},
		{"N", "-4", 3},
		{"OTHER", "1", 3}, // not named by the image
		{"N", "3", 3},     // cached
		{"N", "", 3},      // cached
	} {
		if step.value == "" {
			c.ClearSpec(step.name)
		} else {
			c.SetSpec(step.name, step.value)
		}
		ck, err := c.Kernel(key, 0)
		if err != nil {
			t.Fatalf("%s=%q: %v", step.name, step.value, err)
		}
		if got := b.builds.Load(); got != step.builds {
			t.Errorf("%s=%q: %d builds, want %d", step.name, step.value, got, step.builds)
		}
		v := ""
		for _, s := range c.Specs() {
			if s.Name == "N" {
				v = s.Value
			}
		}
		if f, ok := first[v]; ok && f != ck {
			t.Errorf("N=%q: another kernel than the first time", v)
		}
		first[v] = ck
	}
	if got := c.Specs(); len(got) != 1 || got[0] != (SpecValue{"OTHER", "1"}) {
		t.Errorf("Specs() = %v, want [{OTHER 1}]", got)
	}
}

// TestFaultedNotStored: a program built while the owner's device has
// faulted (Config.Faulted) is released and its build fails with the
// fault; nothing reaches the persistent cache. Once the owner is well, the
// same program is built and stored.
func TestFaultedNotStored(t *testing.T) {
	fault := errors.New("device fault: test")
	var faulted atomic.Bool
	c, b := newCache(t, Config{InMemory: true, Faulted: func() error {
		if faulted.Load() {
			return fault
		}
		return nil
	}}, true)
	img := uniqueImage("test.Faulted", "3")
	faulted.Store(true)
	if _, _, err := c.Program(img); !errors.Is(err, fault) {
		t.Fatalf("build on a faulted device: %v, want the fault", err)
	}
	if es, err := c.cfg.Disk.List(); err != nil || len(es) != 0 {
		t.Fatalf("%d entries stored after a build on a faulted device (%v), want none", len(es), err)
	}
	faulted.Store(false)
	p, _, err := c.Program(img)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if es, err := c.cfg.Disk.List(); err != nil || len(es) != 1 {
		t.Errorf("%d entries stored after a build on a working device (%v), want 1", len(es), err)
	}
	if n := b.builds.Load(); n != 2 {
		t.Errorf("%d builds, want 2: the faulted one is not kept", n)
	}
}

// TestCurrentSince checks that a kernel found current once stays current
// after one load while nothing changes, and that each event after which
// Current answers otherwise, or marks the program used again, makes
// CurrentSince ask Current: a change of values, an eviction, Close, and
// the LRU's pass that clears the used marks.
func TestCurrentSince(t *testing.T) {
	c, _ := newCache(t, Config{InMemory: true, EvictionThreshold: 1}, false)
	a := NewKernelKey(uniqueImage("test.SinceA", "1"), "fill")
	get := func(key *KernelKey) (*Kernel[*testKernel], uint64, uint64) {
		gen, epoch := c.Gen(), c.Epoch()
		ck, err := c.Kernel(key, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ck, gen, epoch
	}
	ck, gen, epoch := get(a)
	for i := range 3 {
		if !c.CurrentSince(ck, gen, &epoch) {
			t.Fatalf("hit %d: not current", i)
		}
	}
	if n := testing.AllocsPerRun(100, func() { c.CurrentSince(ck, gen, &epoch) }); n != 0 {
		t.Errorf("CurrentSince: %v allocations, want 0", n)
	}

	// The used mark, cleared by the LRU's pass, is set again.
	ck.entry.used.Store(false)
	c.epoch.Add(1) // what the pass does after clearing the marks
	if !c.CurrentSince(ck, gen, &epoch) || !ck.entry.used.Load() {
		t.Errorf("after the LRU's pass: not current, or the program not marked used")
	}

	// A change of values.
	c.SetSpec("N", "2")
	if c.CurrentSince(ck, gen, &epoch) {
		t.Errorf("after SetSpec: still current")
	}

	// An eviction: a second program over the threshold evicts the first.
	ck, gen, epoch = get(a)
	if !c.CurrentSince(ck, gen, &epoch) {
		t.Fatal("not current after Kernel")
	}
	get(NewKernelKey(uniqueImage("test.SinceB", "2"), "fill"))
	if c.CurrentSince(ck, gen, &epoch) {
		t.Errorf("after its eviction: still current")
	}

	// Close.
	ck, gen, epoch = get(a)
	c.CurrentSince(ck, gen, &epoch)
	c.Close()
	if c.CurrentSince(ck, gen, &epoch) {
		t.Errorf("after Close: still current")
	}
}

// TestKernelWith checks that a launch's own values select a variant as the
// cache's values do, built once and shared with the cache's values when
// they are equal, without changing the cache's values; each kernel knows
// the values of its program.
func TestKernelWith(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, false)
	img := uniqueImage("test.With", "N * M")
	img.SpecConsts = []SpecValue{{Name: "M", Value: "5"}, {Name: "N", Value: "1"}}
	key := NewKernelKey(img, "fill")
	c.SetSpec("M", "6")
	kernels := map[string]*Kernel[*testKernel]{}
	for _, step := range []struct {
		over   []SpecValue
		builds int64
		specs  string
	}{
		{nil, 1, "[{M 6} {N 1}]"},
		{[]SpecValue{{"N", "3"}}, 2, "[{M 6} {N 3}]"},
		{[]SpecValue{{"N", "3"}}, 2, "[{M 6} {N 3}]"},
		{[]SpecValue{{"N", "1"}}, 2, "[{M 6} {N 1}]"},                 // the cache's values: their variant
		{[]SpecValue{{"M", "5"}, {"N", "3"}}, 3, "[{M 5} {N 3}]"},     // every constant of the image
		{[]SpecValue{{"OTHER", "2"}, {"N", "3"}}, 3, "[{M 6} {N 3}]"}, // one the image does not name
	} {
		ck, err := c.KernelWith(key, 0, step.over)
		if err != nil {
			t.Fatalf("%v: %v", step.over, err)
		}
		if got := b.builds.Load(); got != step.builds {
			t.Errorf("%v: %d builds, want %d", step.over, got, step.builds)
		}
		specs := fmt.Sprint(ck.Specs())
		if specs != step.specs {
			t.Errorf("%v: the kernel's program has %s, want %s", step.over, specs, step.specs)
		}
		if k, ok := kernels[specs]; ok && k != ck {
			t.Errorf("%v: another kernel than the first for %s", step.over, specs)
		}
		kernels[specs] = ck
	}
	if got := fmt.Sprint(c.Specs()); got != "[{M 6}]" {
		t.Errorf("the cache's values are %s after launches with their own; want [{M 6}]", got)
	}
}
