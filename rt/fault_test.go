package rt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// The backend "fakefault" is the fake backend on two devices with the
// device faults of a GPU, which neither PoCL nor a correct kernel
// produces on demand: a launch of a kernel named "bad" returns success and
// faults its device shortly after (faultDelay), as an out-of-bounds
// kernel does on CUDA. From then on every call on that device fails with
// an error wrapping driver.ErrDeviceFault, releases included, and so does
// every new context on it, for the rest of the process (or until
// resetDeviceFaults): CUDA's sticky errors, as measured on an H200. A blocking
// call on a queue that launched "bad" waits for the fault, as a
// synchronisation waits for the kernel. The "fakeauto1" and "fakeauto2"
// backends are one-device copies that automatic selection tries while
// fakeAuto is set.
func init() {
	driver.Register("fakefault", faultBackend{devs: &fakeFaults.devs})
	driver.Register("fakeauto1", autoFaultBackend{faultBackend{devs: &fakeFaults.auto1, one: true}})
	driver.Register("fakeauto2", autoFaultBackend{faultBackend{devs: &fakeFaults.auto2, one: true}})
}

// faultDelay is how long after its launch a "bad" kernel faults.
const faultDelay = 20 * time.Millisecond

var fakeFaults struct {
	devs, auto1, auto2 [2]faultDev
	calls              atomic.Int64 // driver calls of fakefault queues and contexts
	syncs              atomic.Int64 // blocking calls of fakefault queues
	newContexts        atomic.Int64
	// With slow set, a launch stays in the driver for a millisecond;
	// inLaunch counts the launches in the driver, mostInLaunch the most
	// at once.
	slow                   atomic.Bool
	inLaunch, mostInLaunch atomic.Int32
}

// fakeAuto makes fakeauto1 and fakeauto2 take part in automatic selection.
var fakeAuto atomic.Bool

// faultDev is a fake device's fault state: lost once a fault fired, and
// fired closed then.
type faultDev struct {
	mu    sync.Mutex
	lost  atomic.Bool
	fired chan struct{}
}

// fire faults the device.
func (d *faultDev) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.lost.Swap(true) {
		close(d.firedChan())
	}
}

// firedChan returns the channel closed when the device faults. Called
// with mu held.
func (d *faultDev) firedChan() chan struct{} {
	if d.fired == nil {
		d.fired = make(chan struct{})
	}
	return d.fired
}

// wait blocks until the device faults (or 5 s, so that a broken test
// fails rather than hangs).
func (d *faultDev) wait() {
	d.mu.Lock()
	ch := d.firedChan()
	d.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
	}
}

// check returns the device's fault error for call, or nil.
func (d *faultDev) check(call string) error {
	fakeFaults.calls.Add(1)
	if d.lost.Load() {
		return &driver.Error{Call: call, Code: 700, Name: "FAKE_ILLEGAL_ADDRESS", Kind: driver.ErrDeviceFault}
	}
	return nil
}

// resetDeviceFaults makes every fake device usable again and has rt forget the
// devices it saw lost.
func resetDeviceFaults(t *testing.T) {
	t.Helper()
	for _, ds := range []*[2]faultDev{&fakeFaults.devs, &fakeFaults.auto1, &fakeFaults.auto2} {
		for i := range ds {
			ds[i].mu.Lock()
			ds[i].lost.Store(false)
			ds[i].fired = nil
			ds[i].mu.Unlock()
		}
	}
	core.ForgetLostDevices()
	t.Cleanup(core.ForgetLostDevices)
}

type faultBackend struct {
	devs *[2]faultDev
	one  bool // one device, not two
}

func (b faultBackend) Platforms() ([]driver.PlatformInfo, error) {
	n := 2
	if b.one {
		n = 1
	}
	return fakeDevices{n: n}.Platforms()
}

func (b faultBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	fakeFaults.newContexts.Add(1)
	c := &faultContext{fakeContext: fakeContext{ndev: len(devs)}}
	for _, d := range devs {
		fd := &b.devs[d.Index]
		if err := fd.check("fakeCtxCreate"); err != nil {
			return nil, err
		}
		c.devs = append(c.devs, fd)
	}
	return c, nil
}

type autoFaultBackend struct{ faultBackend }

func (autoFaultBackend) Auto() bool { return fakeAuto.Load() }

// faultContext is a fake context whose devices fault.
type faultContext struct {
	fakeContext
	devs []*faultDev
}

// check returns the fault of any of the context's devices.
func (c *faultContext) check(call string) error {
	for _, d := range c.devs {
		if err := d.check(call); err != nil {
			return err
		}
	}
	return nil
}

func (c *faultContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	if err := c.devs[dev].check("fakeStreamCreate"); err != nil {
		return nil, err
	}
	return &faultQueue{d: c.devs[dev]}, nil
}

func (c *faultContext) NewBuffer(size int64) (driver.Buffer, error) {
	if err := c.check("fakeMemAlloc"); err != nil {
		return nil, err
	}
	b, err := c.fakeContext.NewBuffer(size)
	return &faultBuffer{b.(*fakeBuffer), c}, err
}

func (c *faultContext) BuildProgram(source, options string) (driver.Program, error) {
	if err := c.check("fakeModuleLoad"); err != nil {
		return nil, err
	}
	p, err := c.fakeContext.BuildProgram(source, options)
	if err != nil {
		return nil, err
	}
	return faultProgram{p.(*fakeProgram)}, nil
}

func (c *faultContext) LoadProgram(bins [][]byte, options string) (driver.Program, error) {
	if len(bins) == 0 || !strings.HasPrefix(string(bins[0]), "FAKE:") {
		return nil, &driver.Error{Call: "fakeLoad", Code: -42, Name: "INVALID_BINARY", Kind: driver.ErrInvalidBinary}
	}
	return c.BuildProgram(strings.TrimPrefix(string(bins[0]), "FAKE:"), options)
}

// Release fails on a faulted device, as cuMemFree and cuModuleUnload do.
func (c *faultContext) Release() error { return c.check("fakeCtxRelease") }

// NewSubBuffer makes views possible.
func (c *faultContext) NewSubBuffer(b driver.Buffer, offset, size int64) (driver.Buffer, error) {
	if err := c.check("fakeSubBuffer"); err != nil {
		return nil, err
	}
	fb := b.(*faultBuffer)
	return &faultBuffer{&fakeBuffer{b: fb.b[offset : offset+size]}, c}, nil
}

type faultBuffer struct {
	*fakeBuffer
	c *faultContext
}

func (b *faultBuffer) Release() error {
	b.fakeBuffer.Release()
	return b.c.check("fakeMemFree")
}

// faultProgram makes kernels that know their names.
type faultProgram struct{ *fakeProgram }

func (p faultProgram) NewKernel(name string) (driver.Kernel, error) {
	k, err := p.fakeProgram.NewKernel(name)
	if err != nil {
		return nil, err
	}
	return &faultKernel{fakeKernel: k.(*fakeKernel), name: name}, nil
}

type faultKernel struct {
	*fakeKernel
	name string
}

// faultQueue is a fake queue whose device faults; bad is set once it
// launched "bad", after which its blocking calls wait for the fault.
type faultQueue struct {
	d   *faultDev
	bad atomic.Bool
}

// sync is a blocking call: it waits for a "bad" launch to fault.
func (q *faultQueue) sync(call string) error {
	fakeFaults.syncs.Add(1)
	if q.bad.Load() {
		q.d.wait()
	}
	return q.d.check(call)
}

func (q *faultQueue) launch(k driver.Kernel) error {
	if err := q.d.check("fakeLaunchKernel"); err != nil {
		return err
	}
	if fakeFaults.slow.Load() {
		n := fakeFaults.inLaunch.Add(1)
		for m := fakeFaults.mostInLaunch.Load(); n > m && !fakeFaults.mostInLaunch.CompareAndSwap(m, n); m = fakeFaults.mostInLaunch.Load() {
		}
		time.Sleep(time.Millisecond)
		fakeFaults.inLaunch.Add(-1)
	}
	if fk, ok := k.(*faultKernel); ok && fk.name == "bad" {
		q.bad.Store(true)
		time.AfterFunc(faultDelay, q.d.fire)
	}
	return nil
}

func (q *faultQueue) EnqueueKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) (driver.Event, error) {
	if err := q.launch(k); err != nil {
		return nil, err
	}
	return faultEvent{q}, nil
}

func (q *faultQueue) SubmitKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) error {
	return q.launch(k)
}

func (q *faultQueue) ReadBuffer(b driver.Buffer, blocking bool, offset, size int64, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	if err := q.sync("fakeMemcpyDtoH"); err != nil {
		return nil, err
	}
	return fakeQueue{}.ReadBuffer(b.(*faultBuffer).fakeBuffer, blocking, offset, size, dst, wait)
}

func (q *faultQueue) WriteBuffer(b driver.Buffer, blocking bool, offset, size int64, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	if err := q.sync("fakeMemcpyHtoD"); err != nil {
		return nil, err
	}
	return fakeQueue{}.WriteBuffer(b.(*faultBuffer).fakeBuffer, blocking, offset, size, src, wait)
}

func (q *faultQueue) FillBuffer(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) (driver.Event, error) {
	if err := q.d.check("fakeMemset"); err != nil {
		return nil, err
	}
	return fakeQueue{}.FillBuffer(b.(*faultBuffer).fakeBuffer, pattern, offset, size, wait)
}

func (q *faultQueue) CopyBuffer(src, dst driver.Buffer, so, do, size int64, wait []driver.Event) (driver.Event, error) {
	if err := q.d.check("fakeMemcpyDtoD"); err != nil {
		return nil, err
	}
	return fakeQueue{}.CopyBuffer(src.(*faultBuffer).fakeBuffer, dst.(*faultBuffer).fakeBuffer, so, do, size, wait)
}

func (q *faultQueue) Marker(wait []driver.Event) (driver.Event, error) {
	if err := q.d.check("fakeEventRecord"); err != nil {
		return nil, err
	}
	return faultEvent{q}, nil
}

func (q *faultQueue) Flush() error   { return q.d.check("fakeFlush") }
func (q *faultQueue) Finish() error  { return q.sync("fakeStreamSynchronize") }
func (q *faultQueue) Release() error { return q.d.check("fakeStreamDestroy") }

// faultEvent completes with its queue: after a "bad" launch, with the fault.
type faultEvent struct{ q *faultQueue }

func (e faultEvent) Wait() error { return e.q.sync("fakeEventSynchronize") }
func (e faultEvent) Status() (driver.EventStatus, error) {
	if err := e.q.d.check("fakeEventQuery"); err != nil {
		return 0, err
	}
	return driver.StatusComplete, nil
}
func (e faultEvent) Profile() (driver.Timing, error) { return fakeEvent{}.Profile() }
func (e faultEvent) Release() error                  { return nil }

// faultSource declares a kernel that works ("ok") and one that faults
// ("bad").
const faultSource = "__kernel void ok(__global int *x, int n) {}\n__kernel void bad(__global int *x) {}\n"

// openFaultDev opens a fakefault context on device dev (0 or 1), with cfg's
// other fields, closed when t ends unless the test closed it.
func openFaultDev(t *testing.T, dev int, cfg rt.Config) *rt.Context {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	cfg.Backend, cfg.Device, cfg.Cache = "fakefault", fmt.Sprintf("0:%d", dev), &cc
	ctx, err := rt.OpenConfig(withEnv(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// faultKernels builds faultSource on ctx and returns its kernels ok, set
// to buf, and bad.
func faultKernels(t *testing.T, ctx *rt.Context, buf rt.Buffer[int32]) (ok, bad *raw.Kernel) {
	t.Helper()
	p, err := raw.Build(ctx, "faults.cl", faultSource, "")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err = p.Kernel("ok"); err == nil {
		if bad, err = p.Kernel("bad"); err == nil {
			err = errors.Join(raw.SetBuffer(ok, 0, buf), raw.SetArg(ok, 1, int32(4)), raw.SetBuffer(bad, 0, buf))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return ok, bad
}

// TestFaultStateMachine: 8 goroutines launch, graph-launch, transfer,
// view, allocate and free, each on a queue of its own, while a kernel
// faults on another queue; one of them closes the context once the fault
// is recorded. Every goroutine gets an error wrapping ErrDeviceFault
// within a second, none hangs, Close returns promptly with one error, the
// fault, and every later call returns it without a driver call.
func TestFaultStateMachine(t *testing.T) {
	resetDeviceFaults(t)
	ctx := openFaultDev(t, 0, rt.Config{})
	buf, err := rt.NewBuffer[int32](ctx, 1024)
	if err != nil {
		t.Fatal(err)
	}
	_, bad := faultKernels(t, ctx, buf)

	type result struct {
		role string
		err  error
		at   time.Time
	}
	roles := []string{"submit", "launch", "transfer", "view", "free", "graph", "alloc", "close"}
	results := make(chan result, len(roles))
	var started sync.WaitGroup
	started.Add(len(roles))
	for _, role := range roles {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		ok, _ := faultKernels(t, ctx, buf)
		var g *rt.Graph
		if role == "graph" {
			if g, err = q.Record("g", func(rq *rt.Queue) error { return raw.Submit(rq, ok, rt.Range1(64)) }); err != nil {
				t.Fatal(err)
			}
		}
		go func() {
			first := true
			for {
				err := faultRole(ctx, role, q, ok, g, buf)
				if first {
					first = false
					started.Done()
				}
				if err != nil {
					results <- result{role, err, time.Now()}
					return
				}
			}
		}()
	}
	started.Wait()
	q := ctx.Queue()
	launched := time.Now()
	if err := raw.Submit(q, bad, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	err = q.Finish()
	var f *rt.DeviceFault
	if !errors.As(err, &f) || !errors.Is(err, rt.ErrDeviceFault) {
		t.Fatalf("Finish after the faulting launch: %v, want a *DeviceFault", err)
	}
	if !containsLaunch(f.Launches, "bad", "faults.cl") {
		t.Errorf("the fault names %v, want bad (faults.cl) among them", f.Launches)
	}
	timeout := time.After(5 * time.Second)
	for range roles {
		select {
		case r := <-results:
			if !errors.Is(r.err, rt.ErrDeviceFault) {
				t.Errorf("%s: %v, want an error wrapping ErrDeviceFault", r.role, r.err)
			}
			if d := r.at.Sub(launched); d > time.Second+faultDelay {
				t.Errorf("%s got its error %v after the faulting launch, want within 1 s", r.role, d)
			}
		case <-timeout:
			t.Fatal("a goroutine hangs after the fault")
		}
	}
	if err := ctx.Err(); !errors.As(err, &f) {
		t.Errorf("Err after the closing goroutine's Close: %v, want the fault", err)
	}
	if err := buf.Read(q, make([]int32, 1)); !errors.Is(err, rt.ErrClosed) || !errors.Is(err, rt.ErrDeviceFault) {
		t.Errorf("Read after Close: %v, want ErrClosed after the fault", err)
	}
	if err := ctx.Close(); err != nil {
		t.Errorf("a second Close: %v, want nil", err)
	}
}

// faultRole runs one round of what the goroutine of role does.
func faultRole(ctx *rt.Context, role string, q *rt.Queue, ok *raw.Kernel, g *rt.Graph, buf rt.Buffer[int32]) error {
	switch role {
	case "submit":
		return raw.Submit(q, ok, rt.Range1(64))
	case "launch":
		ev, err := raw.Launch(q, ok, rt.Range1(64))
		if err == nil {
			err = ev.Wait()
		}
		return err
	case "transfer":
		v := make([]int32, 16)
		return errors.Join(buf.Write(q, v), buf.Read(q, v))
	case "view":
		v, err := buf.View(0, 32)
		if err == nil {
			err = v.Free()
		}
		return err
	case "free":
		b, err := rt.NewBuffer[int32](ctx, 64)
		if err == nil {
			err = b.Free()
		}
		return err
	case "graph":
		if err := g.Launch(q); err != nil {
			return err
		}
		return q.Finish()
	case "alloc":
		b, err := rt.Alloc[int32](q, 64)
		if err == nil {
			err = b.Free()
		}
		return err
	case "close":
		if ctx.Err() == nil {
			time.Sleep(100 * time.Microsecond)
			return nil
		}
		start := time.Now()
		err := ctx.Close()
		if d := time.Since(start); d > time.Second {
			return fmt.Errorf("Close of the faulted context took %v: %w", d, err)
		}
		if _, many := err.(interface{ Unwrap() []error }); many {
			return fmt.Errorf("Close of the faulted context returned joined errors, want one: %v", err)
		}
		return err
	}
	return fmt.Errorf("no role %s", role)
}

// containsLaunch reports whether ls has a launch of kernel of program.
func containsLaunch(ls []rt.SuspectLaunch, kernel, program string) bool {
	for _, l := range ls {
		if l.Kernel == kernel && l.Program == program {
			return true
		}
	}
	return false
}

// TestFaultNoDriverCall: once the context recorded its fault, launches,
// transfers, allocations, builds, queues, events and Finish return it at
// once, without a driver call; Free gives the memory back and returns it
// too; Close releases everything (its release errors ignored) and returns
// one error, the fault, which names the call that noticed it.
func TestFaultNoDriverCall(t *testing.T) {
	resetDeviceFaults(t)
	ctx := openFaultDev(t, 0, rt.Config{})
	q := ctx.Queue()
	buf, err := rt.NewBuffer[int32](ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	ok, bad := faultKernels(t, ctx, buf)
	pooled, err := rt.Alloc[int32](q, 64)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := raw.Launch(q, ok, rt.Range1(64))
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, bad, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	v := make([]int32, 4)
	err = buf.Read(q, v) // the blocking read notices the fault
	var f *rt.DeviceFault
	if !errors.As(err, &f) || !strings.Contains(f.Err.Error(), "read buffer") || !strings.Contains(f.Err.Error(), "FAKE_ILLEGAL_ADDRESS") {
		t.Fatalf("Read after the faulting launch: %v, want the fault, noticed by the read", err)
	}
	before := fakeFaults.calls.Load()
	calls := map[string]func() error{
		"Read":   func() error { return buf.Read(q, v) },
		"Write":  func() error { return buf.Write(q, v) },
		"Submit": func() error { return raw.Submit(q, ok, rt.Range1(64)) },
		"Finish": q.Finish,
		"Flush":  q.Flush,
		"Wait":   ev.Wait,
		"NewBuffer": func() error {
			_, err := rt.NewBuffer[int32](ctx, 4)
			return err
		},
		"Alloc": func() error {
			_, err := rt.Alloc[int32](q, 4)
			return err
		},
		"View": func() error {
			_, err := buf.View(0, 4)
			return err
		},
		"Build": func() error {
			_, err := raw.Build(ctx, "later.cl", "__kernel void later(int n) {}\n", "")
			return err
		},
		"NewQueue": func() error {
			_, err := ctx.NewQueue(ctx.Devices()[0])
			return err
		},
		"Err":  ctx.Err,
		"Free": pooled.Free,
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, rt.ErrDeviceFault) {
			t.Errorf("%s on the faulted context: %v, want an error wrapping ErrDeviceFault", name, err)
		} else if !errors.As(err, &f) || f != ctx.Err() {
			t.Errorf("%s on the faulted context: %v, want the context's fault", name, err)
		}
	}
	if n := fakeFaults.calls.Load() - before; n != 0 {
		t.Errorf("%d driver calls on the faulted context, want none", n)
	}
	syncs := fakeFaults.syncs.Load()
	err = ctx.Close()
	if n := fakeFaults.syncs.Load() - syncs; n != 0 {
		t.Errorf("Close of the faulted context waited for the device %d times, want none", n)
	}
	if !errors.As(err, &f) || f != ctx.Err() {
		t.Errorf("Close: %v, want the fault", err)
	}
	if _, many := err.(interface{ Unwrap() []error }); many || strings.Count(err.Error(), "FAKE_ILLEGAL_ADDRESS") != 1 {
		t.Errorf("Close: %v, want one error", err)
	}
	if err := buf.Write(q, v); !errors.Is(err, rt.ErrClosed) || !errors.Is(err, rt.ErrDeviceFault) {
		t.Errorf("Write after Close: %v, want ErrClosed after the fault", err)
	}
}

// TestFaultNoticedByNewQueue: a second queue makes the first queue's
// unrecorded uses of allocator memory a barrier (stream-ordered reuse),
// and waits for the first queue's marker in the background, without
// blocking NewQueue; that wait may be what notices the fault: the context
// records it, naming the first queue's launch.
func TestFaultNoticedByNewQueue(t *testing.T) {
	resetDeviceFaults(t)
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "fakefault", Device: "0:0", Cache: &cc}))
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	buf, _ := rt.NewBuffer[int32](ctx, 64)
	_, bad := faultKernels(t, ctx, buf)
	if err := raw.Submit(ctx.Queue(), bad, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := ctx.NewQueue(ctx.Devices()[0]); err != nil && !errors.Is(err, rt.ErrDeviceFault) {
		t.Fatalf("NewQueue after the faulting launch: %v, want nil or the fault", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var f *rt.DeviceFault
	if err := ctx.Err(); !errors.As(err, &f) || !containsLaunch(f.Launches, "bad", "faults.cl") {
		t.Errorf("the context after NewQueue's wait for the first queue: %v, want the fault naming bad", err)
	}
}

// TestFaultSuspects: the fault names the launches since the queue's last
// completed synchronisation, at most 64 with a count of the rest; under
// Config.SyncLaunches exactly the launch that faulted, with the line that
// enqueued it, and launches are synchronised one by one.
func TestFaultSuspects(t *testing.T) {
	t.Run("in flight", func(t *testing.T) {
		resetDeviceFaults(t)
		ctx := openFaultDev(t, 0, rt.Config{})
		q := ctx.Queue()
		buf, _ := rt.NewBuffer[int32](ctx, 64)
		ok, bad := faultKernels(t, ctx, buf)
		for range 5 {
			raw.Submit(q, ok, rt.Range1(64))
		}
		if err := q.Finish(); err != nil { // the five are done: not suspect
			t.Fatal(err)
		}
		for range 99 {
			raw.Submit(q, ok, rt.Range1(64))
		}
		raw.Submit(q, bad, rt.Range1(1))
		var f *rt.DeviceFault
		if err := q.Finish(); !errors.As(err, &f) {
			t.Fatalf("Finish: %v, want the fault", err)
		}
		if len(f.Launches) != 64 || f.Omitted != 100-64 {
			t.Fatalf("%d launches named and %d omitted, want 64 and 36", len(f.Launches), f.Omitted)
		}
		last := f.Launches[63]
		if last.Kernel != "bad" || last.Program != "faults.cl" || last.Queue != 0 || last.File != "" || f.Exact {
			t.Errorf("last suspect %+v (exact %v), want bad of faults.cl on queue 0 without a line", last, f.Exact)
		}
		if !strings.Contains(f.Error(), "and 36 more") || !strings.Contains(f.Error(), "DGEN_SYNC_LAUNCHES") {
			t.Errorf("message %q lacks the count or the hint", f.Error())
		}
	})
	t.Run("graph", func(t *testing.T) {
		resetDeviceFaults(t)
		ctx := openFaultDev(t, 0, rt.Config{})
		q := ctx.Queue()
		buf, _ := rt.NewBuffer[int32](ctx, 64)
		ok, bad := faultKernels(t, ctx, buf)
		g, err := q.Record("steps", func(rq *rt.Queue) error {
			return errors.Join(raw.Submit(rq, ok, rt.Range1(64)), raw.Submit(rq, bad, rt.Range1(1)))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Launch(q); err != nil {
			t.Fatal(err)
		}
		var f *rt.DeviceFault
		if err := q.Finish(); !errors.As(err, &f) {
			t.Fatalf("Finish after the graph: %v, want the fault", err)
		}
		want := rt.SuspectLaunch{Queue: 0, Kernel: "graph steps", Program: "kernels ok, bad"}
		if len(f.Launches) != 1 || f.Launches[0] != want {
			t.Errorf("launches %+v, want the graph's %+v", f.Launches, want)
		}
	})
	t.Run("synchronised", func(t *testing.T) {
		resetDeviceFaults(t)
		ctx := openFaultDev(t, 0, rt.Config{SyncLaunches: true})
		q := ctx.Queue()
		buf, _ := rt.NewBuffer[int32](ctx, 64)
		ok, bad := faultKernels(t, ctx, buf)
		for range 3 {
			if err := raw.Submit(q, ok, rt.Range1(64)); err != nil {
				t.Fatal(err)
			}
		}
		_, file, line, _ := runtime.Caller(0)
		err := raw.Submit(q, bad, rt.Range1(1)) // the launch waits for its fault
		var f *rt.DeviceFault
		if !errors.As(err, &f) {
			t.Fatalf("Submit of bad: %v, want the fault", err)
		}
		want := rt.SuspectLaunch{Queue: 0, Kernel: "bad", Program: "faults.cl", File: file, Line: line + 1}
		if len(f.Launches) != 1 || f.Launches[0] != want || !f.Exact {
			t.Errorf("launches %+v (exact %v), want exactly %+v", f.Launches, f.Exact, want)
		}
		if !strings.Contains(f.Error(), fmt.Sprintf("fault_test.go:%d", line+1)) {
			t.Errorf("message %q does not name the line", f.Error())
		}
	})
	t.Run("graph synchronised", func(t *testing.T) {
		resetDeviceFaults(t)
		ctx := openFaultDev(t, 0, rt.Config{SyncLaunches: true})
		q := ctx.Queue()
		buf, _ := rt.NewBuffer[int32](ctx, 64)
		ok, bad := faultKernels(t, ctx, buf)
		g, err := q.Record("steps", func(rq *rt.Queue) error {
			return errors.Join(raw.Submit(rq, ok, rt.Range1(64)), raw.Submit(rq, bad, rt.Range1(1)))
		})
		if err != nil {
			t.Fatal(err)
		}
		_, file, line, _ := runtime.Caller(0)
		err = g.Launch(q) // the launch waits for its fault
		var f *rt.DeviceFault
		if !errors.As(err, &f) {
			t.Fatalf("Launch of the graph: %v, want the fault", err)
		}
		want := rt.SuspectLaunch{Queue: 0, Kernel: "graph steps", Program: "kernels ok, bad", File: file, Line: line + 1}
		if len(f.Launches) != 1 || f.Launches[0] != want || !f.Exact {
			t.Errorf("launches %+v (exact %v), want exactly %+v", f.Launches, f.Exact, want)
		}
	})
}

// TestSyncLaunchesSerialises: under Config.SyncLaunches no two launches
// of a context are in the driver at once, whatever their queues, and each
// has finished before the next: without it, they are.
func TestSyncLaunchesSerialises(t *testing.T) {
	for _, synced := range []bool{false, true} {
		t.Run(fmt.Sprintf("SyncLaunches=%v", synced), func(t *testing.T) {
			resetDeviceFaults(t)
			ctx := openFaultDev(t, 0, rt.Config{SyncLaunches: synced})
			buf, _ := rt.NewBuffer[int32](ctx, 64)
			fakeFaults.slow.Store(true)
			fakeFaults.mostInLaunch.Store(0)
			defer fakeFaults.slow.Store(false)
			var wg sync.WaitGroup
			for range 4 {
				q, err := ctx.NewQueue(ctx.Devices()[0])
				if err != nil {
					t.Fatal(err)
				}
				ok, _ := faultKernels(t, ctx, buf)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 10 {
						if err := raw.Submit(q, ok, rt.Range1(64)); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if most := fakeFaults.mostInLaunch.Load(); (most == 1) != synced {
				t.Errorf("at most %d launches in the driver at once; want 1 exactly when launches are synchronised", most)
			}
			ok, bad := faultKernels(t, ctx, buf)
			raw.Submit(ctx.Queue(), ok, rt.Range1(1))
			raw.Submit(ctx.Queue(), bad, rt.Range1(1))
			var f *rt.DeviceFault
			if err := ctx.Queue().Finish(); !errors.As(err, &f) {
				t.Fatalf("Finish after bad: %v, want the fault", err)
			}
			if n := len(f.Launches); (n == 1) != synced {
				t.Errorf("%d launches in flight at the fault (%v); want 1 exactly when launches are synchronised", n, f.Launches)
			}
		})
	}
}

// TestFaultOtherDevices: a fault on device 0 leaves a context on device 1
// working, and a new one on it opens; Open of device 0 on the backend that
// lost it fails at once, without a driver call, with an error wrapping
// ErrDeviceFault that says to restart the process.
func TestFaultOtherDevices(t *testing.T) {
	resetDeviceFaults(t)
	ctx0 := openFaultDev(t, 0, rt.Config{})
	ctx1 := openFaultDev(t, 1, rt.Config{})
	buf0, _ := rt.NewBuffer[int32](ctx0, 64)
	_, bad := faultKernels(t, ctx0, buf0)
	raw.Submit(ctx0.Queue(), bad, rt.Range1(1))
	if err := ctx0.Queue().Finish(); !errors.Is(err, rt.ErrDeviceFault) {
		t.Fatalf("Finish on device 0: %v, want the fault", err)
	}
	ctx0.Close()

	roundTrip := func(ctx *rt.Context) error {
		b, err := rt.NewBuffer[int32](ctx, 4)
		if err != nil {
			return err
		}
		defer b.Free()
		ok, _ := faultKernels(t, ctx, b)
		if err := raw.Submit(ctx.Queue(), ok, rt.Range1(4)); err != nil {
			return err
		}
		want, got := []int32{1, 2, 3, 4}, make([]int32, 4)
		if err := errors.Join(b.Write(ctx.Queue(), want), b.Read(ctx.Queue(), got)); err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("read %v, want %v", got, want)
		}
		return nil
	}
	if err := roundTrip(ctx1); err != nil {
		t.Errorf("context on device 1 after device 0 faulted: %v", err)
	}
	if err := roundTrip(openFaultDev(t, 1, rt.Config{})); err != nil {
		t.Errorf("new context on device 1: %v", err)
	}

	before := fakeFaults.newContexts.Load()
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	_, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "fakefault", Device: "0:0", Cache: &cc}))
	if !errors.Is(err, rt.ErrDeviceFault) || !strings.Contains(err.Error(), "restart the process") {
		t.Errorf("Open of the lost device: %v, want ErrDeviceFault and the restart", err)
	}
	if n := fakeFaults.newContexts.Load() - before; n != 0 {
		t.Errorf("Open of the lost device made %d driver contexts, want none", n)
	}
}

// TestFaultAutoFallback: under automatic selection, a device that its
// first backend lost to a fault opens on the next one, with one warning
// through Config.Logger; so does one whose loss rt learns only when the
// driver refuses the context. Once every backend lost it, Open fails with
// ErrDeviceFault and says to restart.
func TestFaultAutoFallback(t *testing.T) {
	t.Setenv("DGEN_BACKEND", "") // Config.Backend's auto defers to it; the GPU bundle's runs set it
	resetDeviceFaults(t)
	fakeAuto.Store(true)
	defer fakeAuto.Store(false)
	var logs bytes.Buffer
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	cfg := rt.Config{Backend: rt.BackendAuto, Device: "fake device", Cache: &cc, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	open := func() (*rt.Context, error) {
		ctx, err := rt.OpenConfig(withEnv(t, cfg))
		if err == nil {
			t.Cleanup(func() { ctx.Close() })
		}
		return ctx, err
	}
	ctx, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Backend() != "fakeauto1" {
		t.Fatalf("automatic selection opened %s, want fakeauto1", ctx.Backend())
	}
	buf, _ := rt.NewBuffer[int32](ctx, 4)
	_, bad := faultKernels(t, ctx, buf)
	raw.Submit(ctx.Queue(), bad, rt.Range1(1))
	var f *rt.DeviceFault
	if err := ctx.Queue().Finish(); !errors.As(err, &f) || f.Backend != "fakeauto1" {
		t.Fatalf("Finish: %v, want a fault on fakeauto1", err)
	}
	ctx.Close()

	ctx, err = open()
	if err != nil || ctx.Backend() != "fakeauto2" {
		t.Fatalf("Open after fakeauto1 lost the device: %v, want a context on fakeauto2", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "fakeauto2") || strings.Count(logs.String(), "level=WARN") != 1 {
		t.Errorf("log %q, want one warning naming fakeauto2", logs.String())
	}
	buf, _ = rt.NewBuffer[int32](ctx, 4)
	_, bad = faultKernels(t, ctx, buf)
	raw.Submit(ctx.Queue(), bad, rt.Range1(1))
	if err := ctx.Queue().Finish(); !errors.As(err, &f) || f.Backend != "fakeauto2" {
		t.Fatalf("Finish: %v, want a fault on fakeauto2", err)
	}
	ctx.Close()
	if _, err := open(); !errors.Is(err, rt.ErrDeviceFault) || !strings.Contains(err.Error(), "restart the process") {
		t.Errorf("Open once both backends lost the device: %v, want ErrDeviceFault and the restart", err)
	}

	// A device lost outside rt's knowledge: the driver refuses the context.
	resetDeviceFaults(t)
	fakeFaults.auto1[0].fire()
	if ctx, err = open(); err != nil || ctx.Backend() != "fakeauto2" {
		t.Fatalf("Open with fakeauto1's device lost unseen: %v, want a context on fakeauto2", err)
	}
	if _, err := rt.NewBuffer[int32](ctx, 4); err != nil {
		t.Errorf("the context opened on fakeauto2 does not work: %v", err)
	}
}

// BenchmarkLaunchPC measures what recording the Go line of every launch
// costs on the launch path: BenchmarkHostPath's generated Enqueue with the
// launch log as rt keeps it (the kernel and program of each launch: pc=off)
// and with the caller's program counter read and kept as well (pc=on),
// which rt does under Config.SyncLaunches only.
//
//	go test ./rt -run '^$' -bench LaunchPC -count 10
func BenchmarkLaunchPC(b *testing.B) {
	q, r, power, in := openHostPath(b)
	for _, on := range []bool{false, true} {
		core.SetLaunchPCs(cx(q.Context()), on)
		b.Run(map[bool]string{false: "pc=off", true: "pc=on"}[on], func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := enqueueBenchStep(q, r, int32(i&1), power, in, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	core.SetLaunchPCs(cx(q.Context()), false)
}

// A spec constant tuned on the fake devices that fault: the program
// declares ft, which the tuning times, and bad.
var (
	ftConst  rt.SpecConst[int32]
	_ftConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&ftConst, 1), ID: pkg + "ftConst", Name: "FT", Default: "1",
		Tune: []string{"1", "2", "4"}}
	_ftProg = &codegen.Program{Var: codegen.ProgramVar(new(rt.Program)), ID: pkg + "ftProg", Name: "ftProg",
		Image: "__kernel void ft(__global int *x, int n) {}\n__kernel void bad(__global int *x) {}\n", SpecConsts: []*codegen.SpecConst{_ftConst}}
	ftKern = &codegen.Kernel{ID: pkg + "Ft", Name: "ft", Program: _ftProg, Params: 2}
	ftBad  = &codegen.Kernel{ID: pkg + "FtBad", Name: "bad", Program: _ftProg, Params: 1}
	_      = codegen.Register(_ftConst)
	_      = codegen.Register(_ftProg)
	_      = codegen.Register(ftKern)
	_      = codegen.Register(ftBad)
)

// TestTuneAfterFault: a fault while a spec constant is tuned stops the
// tuning with the fault (no other candidate is timed) and records nothing:
// the next process, here a context once the device is usable again, times
// the candidates anew.
func TestTuneAfterFault(t *testing.T) {
	resetDeviceFaults(t)
	dir := t.TempDir()
	open := func() *rt.Context {
		cc := defaultCacheConfig()
		cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(dir))
		ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "fakefault", Device: "0:0", Profiling: true, Cache: &cc, Retune: false}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ctx.Close() })
		return ctx
	}
	t.Setenv("DGEN_RETUNE", "")
	runs := map[int32]int{}
	run := func(ctx *rt.Context, fault bool) func(q *rt.Queue, v int32) error {
		buf, _ := rt.NewBuffer[int32](ctx, 64)
		return func(q *rt.Queue, v int32) error {
			runs[v]++
			k, err := codegen.Acquire(q, ftKern)
			if err != nil {
				return err
			}
			codegen.SetBuffer(k, 0, buf)
			codegen.SetScalar(k, 1, int32(64))
			if err := codegen.Submit(q, k, rt.Range1(64), nil); err != nil || !fault || v != 2 {
				return err
			}
			b, err := codegen.Acquire(q, ftBad)
			if err != nil {
				return err
			}
			codegen.SetBuffer(b, 0, buf)
			return codegen.Submit(q, b, rt.Range1(1), nil)
		}
	}
	ctx := open()
	_, err := tuneFull(context.Background(), ctx.Queue(), &ftConst, run(ctx, true))
	if !errors.Is(err, rt.ErrDeviceFault) || !strings.Contains(err.Error(), "stopped while timing FT=2") {
		t.Fatalf("tuning through a fault: %v, want the fault, stopping it at FT=2", err)
	}
	if runs[4] != 0 {
		t.Errorf("FT=4 ran %d times after the fault, want none", runs[4])
	}
	ctx.Close()

	resetDeviceFaults(t)
	ctx = open()
	res, err := tuneFull(context.Background(), ctx.Queue(), &ftConst, run(ctx, false))
	if err != nil || res.Cached || res.Timed != 3 {
		t.Errorf("tuning after the fault: %+v, %v; want the 3 candidates timed, no record", res, err)
	}
}
