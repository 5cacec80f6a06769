package rt_test

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// The fake backend "fake", in the manner of database/sql's fakedb_test.go:
// host memory for buffers, kernels that a source declares and that run
// nothing, programs whose binaries are their source. It lets the tests of
// rt's own logic (caches, buffers, errors) run without an OpenCL device;
// tests of device behaviour use PoCL.
func init() { driver.Register("fake", fakeBackend{}) }

// fakeStats counts what the fake driver was asked to do.
var fakeStats struct {
	builds, loads, kernels, launches atomic.Int64
	markers, flushes                 atomic.Int64
	events                           atomic.Int64 // driver events created
	setArgs                          atomic.Int64 // kernel arguments set
	// afterRelease counts commands that used a buffer released before
	// the command returned: what a Free racing with it must never cause.
	afterRelease atomic.Int64
}

type fakeBackend struct{}

func (fakeBackend) Platforms() ([]driver.PlatformInfo, error) {
	dev := driver.DeviceInfo{Name: "fake device", Platform: "fake", Type: driver.DeviceCPU, Version: "OpenCL 1.2 fake",
		DriverVersion: "1", OpenCLCVersion: "OpenCL C 1.2", GlobalMemSize: 1 << 30, MaxAllocSize: 1 << 28, ComputeUnits: 1, MaxWorkGroupSize: 256}
	return []driver.PlatformInfo{{Name: "fake", Vendor: "dgen", Version: "OpenCL 1.2 fake", Devices: []driver.DeviceInfo{dev}}}, nil
}

func (fakeBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	return &fakeContext{ndev: len(devs)}, nil
}

type fakeContext struct{ ndev int }

func (c *fakeContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return fakeQueue{}, nil
}
func (c *fakeContext) NewBuffer(size int64) (driver.Buffer, error) {
	fakeHandles.Lock()
	defer fakeHandles.Unlock()
	if n := len(fakeHandles.released); fakeHandles.reuse && n > 0 {
		b := fakeHandles.released[n-1]
		fakeHandles.released = fakeHandles.released[:n-1]
		b.b = make([]byte, size)
		b.released.Store(false)
		return b, nil
	}
	return &fakeBuffer{b: make([]byte, size)}, nil
}

// fakeHandles, when reuse is set, makes NewBuffer hand out the handle of
// the buffer released last, as a real driver may reuse a freed handle's
// address: a fault that PoCL and NVIDIA produce only by chance.
var fakeHandles struct {
	sync.Mutex
	reuse    bool
	released []*fakeBuffer
}

func (c *fakeContext) Release() error { return nil }

var fakeKernelRE = regexp.MustCompile(`__kernel\s+void\s+(\w+)\s*\(([^)]*)\)`)

// Faults a source asks the fake driver for: "// fake:sleep=50ms" makes its
// build take that long; "// fake:binaries=0" makes its program return that
// many binaries, whatever the number of devices.
var (
	fakeSleepRE    = regexp.MustCompile(`fake:sleep=(\w+)`)
	fakeBinariesRE = regexp.MustCompile(`fake:binaries=(\d+)`)
)

// BuildProgram "compiles" a source: a source containing #error fails to
// build, with the line as its log.
func (c *fakeContext) BuildProgram(source, options string) (driver.Program, error) {
	fakeStats.builds.Add(1)
	if m := fakeSleepRE.FindStringSubmatch(source); m != nil {
		d, _ := time.ParseDuration(m[1])
		time.Sleep(d)
	}
	if i := strings.Index(source, "#error"); i >= 0 {
		return nil, &driver.Error{Call: "fakeBuild", Code: -11, Name: "BUILD_FAILURE", Log: source[i:], Kind: driver.ErrBuildFailed}
	}
	p := &fakeProgram{source: source, ndev: c.ndev, nbin: c.ndev, kernels: map[string]int{}}
	if m := fakeBinariesRE.FindStringSubmatch(source); m != nil {
		p.nbin, _ = strconv.Atoi(m[1])
	}
	for _, m := range fakeKernelRE.FindAllStringSubmatch(source, -1) {
		n := 0
		if strings.TrimSpace(m[2]) != "" {
			n = strings.Count(m[2], ",") + 1
		}
		p.kernels[m[1]] = n
	}
	return p, nil
}

func (c *fakeContext) LoadProgram(bins [][]byte, options string) (driver.Program, error) {
	fakeStats.loads.Add(1)
	if len(bins) == 0 || !strings.HasPrefix(string(bins[0]), "FAKE:") {
		return nil, &driver.Error{Call: "fakeLoad", Code: -42, Name: "INVALID_BINARY", Kind: driver.ErrInvalidBinary}
	}
	fakeStats.builds.Add(-1) // BuildProgram counts builds from source only
	return c.BuildProgram(strings.TrimPrefix(string(bins[0]), "FAKE:"), options)
}

type fakeProgram struct {
	source  string
	ndev    int
	nbin    int            // binaries that Binaries returns
	kernels map[string]int // name to argument count
}

func (p *fakeProgram) Binaries() ([][]byte, error) {
	bins := make([][]byte, p.nbin)
	for i := range bins {
		bins[i] = []byte("FAKE:" + p.source)
	}
	return bins, nil
}

func (p *fakeProgram) KernelNames() ([]string, error) {
	var names []string
	for n := range p.kernels {
		names = append(names, n)
	}
	return names, nil
}

func (p *fakeProgram) NewKernel(name string) (driver.Kernel, error) {
	fakeStats.kernels.Add(1)
	n, ok := p.kernels[name]
	if !ok {
		return nil, &driver.Error{Call: "fakeCreateKernel", Code: -46, Name: "INVALID_KERNEL_NAME", Kind: driver.ErrNoKernel}
	}
	return &fakeKernel{nargs: n}, nil
}

func (p *fakeProgram) Release() error { return nil }

type fakeKernel struct {
	nargs int
	bufs  map[int]*fakeBuffer // the buffer arguments as set
}

func (k *fakeKernel) SetArgBuffer(i int, b driver.Buffer) error {
	fakeStats.setArgs.Add(1)
	if k.bufs == nil {
		k.bufs = make(map[int]*fakeBuffer)
	}
	k.bufs[i], _ = b.(*fakeBuffer)
	return nil
}
func (k *fakeKernel) SetArgScalar(i int, size uintptr, v uint64) error {
	fakeStats.setArgs.Add(1)
	return nil
}
func (k *fakeKernel) SetArgBytes(i int, size uintptr, p unsafe.Pointer) error {
	fakeStats.setArgs.Add(1)
	return nil
}
func (k *fakeKernel) SetArgLocal(i int, size uintptr) error { fakeStats.setArgs.Add(1); return nil }
func (k *fakeKernel) NumArgs() (int, error)                 { return k.nargs, nil }
func (k *fakeKernel) WorkGroupInfo(uintptr) (driver.KernelWorkGroupInfo, error) {
	return driver.KernelWorkGroupInfo{WorkGroupSize: 256, PreferredMultiple: 1}, nil
}
func (k *fakeKernel) Release() error { return nil }

type fakeBuffer struct {
	mu       sync.Mutex
	b        []byte
	released atomic.Bool
}

// checkLive counts a use of b after its release.
func (b *fakeBuffer) checkLive() {
	if b != nil && b.released.Load() {
		fakeStats.afterRelease.Add(1)
	}
}

func (b *fakeBuffer) Release() error {
	b.released.Store(true)
	fakeHandles.Lock()
	defer fakeHandles.Unlock()
	if fakeHandles.reuse {
		fakeHandles.released = append(fakeHandles.released, b)
	}
	return nil
}

// fakeQueue runs every command at once, in order; its events are complete.
type fakeQueue struct{}

type fakeEvent struct{}

// newFakeEvent returns an event, counting it.
func newFakeEvent() fakeEvent {
	fakeStats.events.Add(1)
	return fakeEvent{}
}

func (fakeEvent) Wait() error                         { return nil }
func (fakeEvent) Status() (driver.EventStatus, error) { return driver.StatusComplete, nil }
func (fakeEvent) Profile() (driver.Timing, error) {
	return driver.Timing{Queued: 1, Submitted: 2, Started: 3, Ended: 4}, nil
}
func (fakeEvent) Release() error { return nil }

// fakeLaunchHook, if set, is called at the start of every launch: a test
// makes a launch block inside the driver with it.
var fakeLaunchHook atomic.Pointer[func()]

// launch is a kernel launch: it runs the hook, then checks that no buffer
// argument was released meanwhile.
func (fakeQueue) launch(k driver.Kernel) {
	fakeStats.launches.Add(1)
	if h := fakeLaunchHook.Load(); h != nil {
		(*h)()
	}
	for _, b := range k.(*fakeKernel).bufs {
		b.checkLive()
	}
}

func (q fakeQueue) EnqueueKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) (driver.Event, error) {
	q.launch(k)
	return newFakeEvent(), nil
}

func (q fakeQueue) SubmitKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) error {
	q.launch(k)
	return nil
}

func fakeSpan(b driver.Buffer, offset, size int64) (*fakeBuffer, []byte, error) {
	fb := b.(*fakeBuffer)
	if offset < 0 || size < 0 || offset+size > int64(len(fb.b)) {
		return nil, nil, &driver.Error{Call: "fakeTransfer", Code: -30, Name: "INVALID_VALUE"}
	}
	return fb, fb.b[offset : offset+size], nil
}

func (fakeQueue) ReadBuffer(b driver.Buffer, blocking bool, offset, size int64, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	fb, span, err := fakeSpan(b, offset, size)
	if err != nil {
		return nil, err
	}
	fb.mu.Lock()
	copy(unsafe.Slice((*byte)(dst), size), span)
	fb.mu.Unlock()
	if blocking {
		return nil, nil
	}
	return newFakeEvent(), nil
}

// fakeWriteHook, if set, is called at the start of every WriteBuffer with
// its size: a test makes a write block with it.
var fakeWriteHook atomic.Pointer[func(size int64)]

func (fakeQueue) WriteBuffer(b driver.Buffer, blocking bool, offset, size int64, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	if h := fakeWriteHook.Load(); h != nil {
		(*h)(size)
	}
	fb, span, err := fakeSpan(b, offset, size)
	if err != nil {
		return nil, err
	}
	fb.checkLive()
	fb.mu.Lock()
	copy(span, unsafe.Slice((*byte)(src), size))
	fb.mu.Unlock()
	if blocking {
		return nil, nil
	}
	return newFakeEvent(), nil
}

// fakeFillHook, if set, is called at the start of every FillBuffer with
// its size: a test holds a fill inside the driver with it.
var fakeFillHook atomic.Pointer[func(size int64)]

func (fakeQueue) FillBuffer(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) (driver.Event, error) {
	if h := fakeFillHook.Load(); h != nil {
		(*h)(size)
	}
	fb, span, err := fakeSpan(b, offset, size)
	if err != nil {
		return nil, err
	}
	fb.mu.Lock()
	for i := range span {
		span[i] = pattern[i%len(pattern)]
	}
	fb.mu.Unlock()
	return newFakeEvent(), nil
}

// fakeCopyHook, if set, is called at the start of every CopyBuffer with
// its size: a test holds a copy inside the driver with it.
var fakeCopyHook atomic.Pointer[func(size int64)]

func (fakeQueue) CopyBuffer(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) (driver.Event, error) {
	if h := fakeCopyHook.Load(); h != nil {
		(*h)(size)
	}
	sb, s, err := fakeSpan(src, srcOffset, size)
	if err != nil {
		return nil, err
	}
	db, d, err := fakeSpan(dst, dstOffset, size)
	if err != nil {
		return nil, err
	}
	tmp := make([]byte, size)
	sb.mu.Lock()
	copy(tmp, s)
	sb.mu.Unlock()
	db.mu.Lock()
	copy(d, tmp)
	db.mu.Unlock()
	return newFakeEvent(), nil
}

func (fakeQueue) Marker(wait []driver.Event) (driver.Event, error) {
	fakeStats.markers.Add(1)
	return newFakeEvent(), nil
}
func (fakeQueue) Flush() error   { fakeStats.flushes.Add(1); return nil }
func (fakeQueue) Finish() error  { return nil }
func (fakeQueue) Release() error { return nil }

// openFake opens a context on the fake backend with the persistent cache
// off unless edit turns it on.
func openFake(t testing.TB, edit func(*rt.CacheConfig)) *rt.Context {
	t.Helper()
	return openFakeBackend(t, "fake", edit)
}

// openFakeBackend is openFake on the test backend registered as name (a
// variant of the fake one); Close is checked when t ends.
func openFakeBackend(t testing.TB, name string, edit func(*rt.CacheConfig)) *rt.Context {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	if edit != nil {
		edit(&cc)
	}
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: rt.Backend(name), Device: "cpu", Cache: &cc})) // whatever DGEN_DEVICE says
	if err != nil {
		t.Fatalf("open %s context: %v", name, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ctx
}

// TestFakeProgramCache checks the program cache's own logic on the fake
// driver: a second request is a memory hit, concurrent first requests
// build once, a build error is stored and wraps ErrBuildFailed with the
// log, and eviction under a tiny threshold keeps the newest program.
func TestFakeProgramCache(t *testing.T) {
	ctx := openFake(t, func(c *rt.CacheConfig) { c.EvictionThreshold = 1 })
	src := func(tag string) string {
		return fmt.Sprintf("// %s\n__kernel void k(__global int *x, int n) {}\n", tag)
	}
	before := fakeStats.builds.Load()
	img := &core.ProgramImage{ID: "fake.A", Source: src("a")}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := cx(ctx).ProgramFor(img)
			if err != nil {
				t.Error(err)
				return
			}
			p.Release()
		}()
	}
	wg.Wait()
	if n := fakeStats.builds.Load() - before; n != 1 {
		t.Errorf("8 concurrent first requests built %d times, want 1", n)
	}

	bad := &core.ProgramImage{ID: "fake.Bad", Source: "#error no\n"}
	before = fakeStats.builds.Load()
	for range 2 {
		_, err := cx(ctx).ProgramFor(bad)
		var de *rt.DeviceError
		if !errors.Is(err, rt.ErrBuildFailed) || !errors.As(err, &de) || !strings.Contains(de.Log, "#error no") {
			t.Errorf("bad program: %v, want ErrBuildFailed with the log", err)
		}
	}
	if n := fakeStats.builds.Load() - before; n != 1 {
		t.Errorf("a failing program asked for twice built %d times, want 1 (the error is stored)", n)
	}

	key := core.NewKernelSpec(&core.ProgramImage{ID: "fake.B", Source: src("b")}, "k")
	ck, err := cx(ctx).KernelFor(key, cq(ctx.Queue()))
	if err != nil {
		t.Fatal(err)
	}
	if n := core.CachedNumArgs(ck); n != 2 {
		t.Errorf("kernel k takes %d arguments, want 2", n)
	}
	if s := ctx.Stats().Cache; s.Evictions == 0 {
		t.Errorf("stats %+v: want A evicted under a 1-byte threshold", s)
	}
}

// TestFakeBufferRoundTrip checks buffers' bounds and copies on the fake
// driver.
func TestFakeBufferRoundTrip(t *testing.T) {
	ctx := openFake(t, nil)
	q := ctx.Queue()
	b, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := b.Write(q, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, 2)
	if err := b.ReadAt(q, 2, got); err != nil || got[0] != 3 || got[1] != 4 {
		t.Errorf("ReadAt(2) = %v, %v; want [3 4]", got, err)
	}
	if err := b.ReadAt(q, 3, got); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("ReadAt past the end: %v, want ErrOutOfRange", err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(q, []int32{1}); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("Write after Free: %v, want ErrFreed", err)
	}
}
