package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// openFakeDevices opens a context on n devices of the fake backend, with
// the persistent cache in a temporary directory.
func openFakeDevices(t *testing.T, n int) *rt.Context {
	t.Helper()
	name := fmt.Sprintf("fake%d", n)
	fakeDevicesOnce.Do(func() {
		for i := 1; i <= 4; i++ {
			driver.Register(fmt.Sprintf("fake%d", i), fakeDevices{n: i})
		}
	})
	cc := defaultCacheConfig()
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(t.TempDir()))
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: rt.Backend(name), Device: "0:*", Cache: &cc}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

var fakeDevicesOnce sync.Once

// fakeDevices is the fake backend with n copies of its device on its
// platform.
type fakeDevices struct {
	fakeBackend
	n int
}

func (b fakeDevices) Platforms() ([]driver.PlatformInfo, error) {
	ps, err := b.fakeBackend.Platforms()
	d := ps[0].Devices[0]
	ps[0].Devices = nil
	for i := range b.n {
		d.Index = i
		ps[0].Devices = append(ps[0].Devices, d)
	}
	return ps, err
}

// TestTooFewBinaries: a driver that returns fewer binaries than the
// context has devices is an error of storing the program, not an index
// out of range: the program is built and works, and nothing is stored.
func TestTooFewBinaries(t *testing.T) {
	for _, ndev := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d devices", ndev), func(t *testing.T) {
			ctx := openFakeDevices(t, ndev)
			src := fmt.Sprintf("// fake:binaries=0 %d\n__kernel void k(int n) {}\n", ndev)
			p, err := raw.Build(ctx, "few", src, "")
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			defer p.Release()
			if _, err := p.Kernel("k"); err != nil {
				t.Errorf("kernel of a program whose binaries could not be stored: %v", err)
			}
			if es, err := cx(ctx).PersistentCache().List(); err != nil || len(es) != 0 {
				t.Errorf("%d entries stored (%v); want none", len(es), err)
			}
		})
	}
}

// TestWaiterOnFailedBuildIsNoHit: a request that waits for another
// goroutine's build of the same program is a memory hit only once that
// build has succeeded; a build that fails gives its waiters no hit.
func TestWaiterOnFailedBuildIsNoHit(t *testing.T) {
	ctx := openFake(t, nil)
	src := "// fake:sleep=200ms\n#error no\n"
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = raw.Build(ctx, "fails", src, "")
		}()
		time.Sleep(50 * time.Millisecond) // the second one waits for the first
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, rt.ErrBuildFailed) {
			t.Errorf("request %d: %v; want ErrBuildFailed", i, err)
		}
	}
	if s := ctx.Stats().Cache; s.MemHits != 0 || s.Builds != 1 {
		t.Errorf("stats %+v; want 1 build and no memory hit", s)
	}
}

var (
	slowGlobal, quickGlobal rt.DeviceGlobal[[3]uint32]
	hostOnlyGlobal          rt.DeviceGlobal[int32]
)

func init() {
	codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&slowGlobal), ID: pkg + "slowGlobal"})
	codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&quickGlobal), ID: pkg + "quickGlobal"})
	// An image-scope global that no program owns lives in host memory.
	codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&hostOnlyGlobal), ID: pkg + "hostOnlyGlobal", ImageScope: true})
}

// TestGlobalStorageConcurrent: making one global's storage, held inside
// the driver as it enqueues the zero fill, does not hold up another
// global's.
func TestGlobalStorageConcurrent(t *testing.T) {
	ctx := openFake(t, nil)
	q := ctx.Queue()
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	hook := func(size int64) {
		if !first.Swap(true) { // the first fill blocks
			close(entered)
			<-release
		}
	}
	fakeFillHook.Store(&hook)
	defer fakeFillHook.Store(nil)
	slow := make(chan error, 1)
	go func() { _, err := slowGlobal.Read(q); slow <- err }()
	<-entered
	quick := make(chan error, 1)
	go func() { quick <- quickGlobal.Write(q, [3]uint32{1, 2, 3}) }()
	select {
	case err := <-quick:
		if err != nil {
			t.Errorf("write of another global: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a global's storage waited for another global's zero fill")
		close(release)
		<-quick
		release = nil
	}
	if release != nil {
		close(release)
	}
	if err := <-slow; err != nil {
		t.Errorf("read of the global being zeroed: %v", err)
	}
}

// TestHostGlobalPerContext: an image-scope global in no program lives in
// host memory of each context, as its storage on a device would: a value
// written in one context is not seen by another.
func TestHostGlobalPerContext(t *testing.T) {
	a, b := openFake(t, nil), openFake(t, nil)
	if err := hostOnlyGlobal.Write(a.Queue(), 7); err != nil {
		t.Fatal(err)
	}
	if v, err := hostOnlyGlobal.Read(b.Queue()); err != nil || v != 0 {
		t.Errorf("another context reads %d, %v; want 0", v, err)
	}
	if v, err := hostOnlyGlobal.Read(a.Queue()); err != nil || v != 7 {
		t.Errorf("the context that wrote reads %d, %v; want 7", v, err)
	}
}

// TestReleasedEventError: after Release, waiting for an event or passing
// it in a wait list is an error of its own, not ErrClosed: the context is
// open.
func TestReleasedEventError(t *testing.T) {
	ctx := openFake(t, nil)
	q := ctx.Queue()
	ev, err := q.Marker()
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.Release(); err != nil {
		t.Fatal(err)
	}
	_, listErr := q.Marker(ev)
	for what, err := range map[string]error{"Wait": ev.Wait(), "wait list": listErr} {
		if !errors.Is(err, rt.ErrReleased) || errors.Is(err, rt.ErrClosed) {
			t.Errorf("%s after Release: %v; want ErrReleased, not ErrClosed", what, err)
		}
	}
}

// TestLocalSizeZero: a work-group size with a zero dimension never reaches
// the driver: WithLocal(0) is an error, not "the device chooses".
func TestLocalSizeZero(t *testing.T) {
	ctx := openFake(t, nil)
	p, err := raw.Build(ctx, "zero", "__kernel void k(int n) {}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.Kernel("k")
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.SetArg(k, 0, int32(1)); err != nil {
		t.Fatal(err)
	}
	for _, r := range []rt.Range{
		rt.Range1(64).WithLocal(0),
		rt.Range2(64, 64).WithLocal(0, 0),
		rt.Range2(64, 64).WithLocal(16, 0),
		rt.Range2(64, 64).WithLocal(),
		{Dims: 1, Global: [3]int{64, 1, 1}, Local: [3]int{0, 16, 0}},
		{Dims: 1, Global: [3]int{64, 1, 1}, Local: [3]int{16, 4, 0}},
	} {
		before := fakeStats.launches.Load()
		if err := raw.Submit(ctx.Queue(), k, r); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("range %v: %v; want ErrInvalidArgument", r, err)
		}
		if fakeStats.launches.Load() != before {
			t.Errorf("range %v reached the driver", r)
		}
	}
	if err := raw.Submit(ctx.Queue(), k, rt.Range2(64, 64).WithLocal(16, 16)); err != nil {
		t.Errorf("a valid local size: %v", err)
	}
}

// TestLocalArgTooLarge sets a __local argument larger than a kernel
// argument's record holds (driver.Arg.Size is 32 bits) on the fake driver,
// whose device reports no local memory size: an error wrapping
// ErrInvalidArgument, never a size cut to its low bits.
func TestLocalArgTooLarge(t *testing.T) {
	k := kernelOf(t, openFake(t, nil), "__kernel void k(__local int *l) {}\n", "k")
	for _, size := range []int{1<<32 + 64, 1 << 31} {
		if err := k.SetLocal(0, size); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("SetLocal(0, %d): %v, want an error wrapping ErrInvalidArgument", size, err)
		}
	}
	if err := k.SetLocal(0, 64); err != nil {
		t.Errorf("SetLocal(0, 64): %v", err)
	}
}
