package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/stats"
	"github.com/dgen-go/dgen/rt/trace"
)

// Contexts: Open and Close, devices and their selection, the close guard,
// tracing, the program cache and the remote tier beneath it, and the
// specialization-constant values of a context.

// Context is an open backend context: rt.Context's implementation, which
// rt defines its Context over.
//
// Invariants:
//   - drv, devices (and each device's fields), queue, profiling, retune,
//     tr, ownTracer, traced, devTimes, traceLog, allocCfg, graphCfg,
//     logger, pool.max and the cache (pc, disk, remote: initCache) are set
//     by OpenConfig before it returns the context and never change after;
//     rt sets each device's Facade before it hands the context out.
//   - closed goes from false to true once, in Close. Every call that uses
//     a driver object runs between enter and exit, which guard counts;
//     Close sets closed, waits for guard to drain, and only then releases
//     anything, so that no driver object is released under a call, and a
//     call that enters after Close fails with ErrClosed (closeGuard).
//   - mu guards queues and the creation of allocators (allocs' slots are
//     atomic pointers, read without it). It is held across a driver call
//     on two once-per-context paths only: making a device's allocator
//     queue on its first use, and finishing the first queue when a second
//     is made (NewQueue). multiQueue goes from false to true once, then:
//     from then on commands record their uses of allocator memory
//     (streamorder.go).
//   - nqueues, driverAllocs, driverReleases, tuneTimed and tuneRecords are
//     atomic counters.
//   - decls, graphs, instances, images and pool each have a mutex of their
//     own, described on their types; none is taken while mu is held.
//   - The program cache (pc) has its own locks (rt/internal/progcache);
//     one builder per key, and no lock held across a build.
type Context struct {
	drv       driver.Context
	devices   []*Device
	queue     *Queue
	profiling bool
	retune    bool // Config.Retune (tune.go)

	tr        *trace.Tracer // never nil; see "Tracing in rt" below
	ownTracer bool          // tr was made by the context, which closes it
	traceLog  *lineLogger   // what tr's summary and log without a path write to; nil for none
	traced    bool          // tracing configured
	devTimes  bool          // traced with device-time sampling: queues profile
	nqueues   atomic.Int32  // queue ids
	// multiQueue is set once the context has a second queue: from then on
	// commands record their uses of allocator memory (streamorder.go).
	multiQueue atomic.Bool

	closed       atomic.Bool
	syncLaunches bool // Config.SyncLaunches (fault.go)
	launchPCs    bool // launch logs record the Go line of each launch: set with syncLaunches (fault.go)
	// fault is the device fault that the context recorded, once, and
	// returns from every call after it (fault.go).
	fault  atomic.Pointer[DeviceFault]
	guard  closeGuard // calls in progress, which Close waits for (closeGuard)
	mu     sync.Mutex // guards queues and the creation of allocators
	queues []*Queue

	backend  string     // the backend's registered name
	launchMu sync.Mutex // under syncLaunches, held from a launch until its queue finished (fault.go)

	decls                        declState // storage of the device globals of registered declarations
	allocCfg                     alloc.Config
	allocs                       []allocSlot // by device index, created on first use
	driverAllocs, driverReleases atomic.Uint64
	pc                           progcache.Cache[*Kernel] // the kernel/program cache (initCache)
	disk                         *diskcache.Cache         // beneath pc
	remote                       diskcache.RemoteTier     // beneath disk; nil without DGEN_CACHE_REMOTE
	graphs                       graphSet                 // live graphs, which Close releases (graph.go)
	live                         liveSet                  // what the context made for its user to release, which Close releases if the user did not (live.go)
	instances                    instanceSet              // kernel instances of generated specs, which Close releases (instance.go)
	logger                       *slog.Logger             // Config.Logger: nil for slog.Default() (log)
	tuneTimed, tuneRecords       atomic.Int64             // SpecConst.Tune's counters (tune.go)
	images                       imageState               // formats, samplers, images of allocation sites (image.go)
	graphCfg                     graphConfig              // what command graphs may be prepared as (config.go)
	pool                         queuePool                // the queues of AcquireQueue (queuepool.go)
}

// Open opens a context as the environment says.
func Open() (*Context, error) { return OpenConfig(Config{}) }

// OpenConfig opens a context as cfg and the environment say.
func OpenConfig(cfg Config) (*Context, error) {
	cfg, err := cfg.withEnv(nil) // config.go
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	acfg, err := cfg.allocConfig()
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	gcfg, err := cfg.graphConfig(nil) // config.go
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	cc, err := resolveCacheConfig(cfg.Cache)
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	name, drv, devs, err := openBackend(cfg) // backend.go
	if err != nil {
		return nil, err
	}
	c := &Context{drv: drv, profiling: cfg.Profiling, retune: cfg.Retune, allocCfg: acfg, allocs: make([]allocSlot, len(devs)), graphCfg: gcfg, logger: cfg.Logger,
		backend: name, syncLaunches: cfg.SyncLaunches, launchPCs: cfg.SyncLaunches}
	c.pool.max = cfg.QueuePool
	if c.pool.max <= 0 {
		c.pool.max = max(runtime.GOMAXPROCS(0), 16)
	}
	for i, d := range devs {
		c.devices = append(c.devices, newDevice(d, i))
	}
	if err := c.openTracing(cfg); err != nil {
		drv.Release()
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	if c.queue, err = c.NewQueue(c.devices[0]); err != nil {
		c.closeTracing()
		drv.Release()
		if errors.Is(err, ErrDeviceFault) {
			openFault(name, devs, err)
		}
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	if lc, ok := drv.(driver.LineInfoContext); ok && cfg.SyncLaunches {
		cc.CompileOptions = strings.TrimSpace(cc.CompileOptions + " " + lc.LineInfoOptions())
	}
	c.initCache(cc)
	_, noCUDA := driver.Lookup("cuda")
	noteNVIDIA(c.log(), nvidiaOnOpenCL(cfg, name, devs, noCUDA == nil))
	return c, nil
}

func labels(devs []driver.DeviceInfo) string {
	var s []string
	for _, d := range devs {
		s = append(s, strconv.Quote(d.Name))
	}
	return strings.Join(s, ", ")
}

// Backend returns the name the context's backend is registered under ("cuda",
// "opencl"): the one Config.Backend named, or the one automatic selection
// chose.
func (c *Context) Backend() string {
	if c == nil {
		return ""
	}
	return c.backend
}

// Devices returns the context's devices.
func (c *Context) Devices() []*Device {
	if c == nil {
		return nil
	}
	return c.devices
}

// Queue returns the context's default queue, on its first device.
func (c *Context) Queue() *Queue {
	if c == nil {
		return nil
	}
	return c.queue
}

// newDriverQueue creates the driver queue of a new Queue on device dev:
// kernel-timed (driver.KernelTimer, timed true) when tracing reports the
// device times of every command and the backend has a cheaper way than
// events.
func (c *Context) newDriverQueue(dev int) (q driver.Queue, timed bool, err error) {
	if kt, ok := c.drv.(driver.KernelTimer); ok && c.devTimes && c.tr.DeviceSampling() == 1 {
		q, err = kt.NewKernelTimedQueue(dev)
		if !errors.Is(err, errors.ErrUnsupported) {
			return q, err == nil, err
		}
	}
	q, err = c.drv.NewQueue(dev, c.profiling)
	return q, false, err
}

// NewQueue creates an in-order queue on dev, which must be one of the
// context's devices. The context releases it on Close.
func (c *Context) NewQueue(dev *Device) (*Queue, error) {
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("create queue: %w", err)
	}
	defer c.exit()
	if dev == nil || dev.index >= len(c.devices) || c.devices[dev.index] != dev {
		return nil, fmt.Errorf("create queue: %w: the device is not one of this context's (%s)", ErrInvalidArgument, c.deviceLabel())
	}
	dq, late, err := c.newDriverQueue(dev.index)
	if err != nil {
		return nil, c.failed(nil, fmt.Errorf("create queue on %q: %w", dev.Name, err))
	}
	q := &Queue{ctx: c, gate: new(queueGate), dev: dev, drv: dq, profiling: c.profiling, lateTimes: late, id: int(c.nqueues.Add(1) - 1)}
	q.launcher, _ = dq.(driver.ArgLauncher)
	if late {
		q.timer, _ = dq.(driver.KernelTimedQueue)
	}
	if err := c.initQueueTrace(q); err != nil {
		dq.Release()
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queues) == 1 && !c.multiQueue.Load() {
		// The first queue's uses of allocator memory went unrecorded:
		// complete them before another queue can reuse a block. A command
		// records its uses if it reads multiQueue set after it was
		// enqueued; one that reads it unset was enqueued before this
		// Store, hence before Finish.
		c.multiQueue.Store(true)
		if err := c.queues[0].drv.Finish(); err != nil {
			dq.Release()
			return nil, c.recordFault(c.queues, c.queues[0], fmt.Errorf("create queue on %q: finish the first queue: %w", dev.Name, err)) // c.mu is held
		}
	}
	c.queues = append(c.queues, q)
	return q, nil
}

// Close waits for every command enqueued on the context's queues, then
// releases everything the context made that is not yet released: buffers
// (from the allocators, held or in use, and from NewBuffer), views,
// images, pinned memory, events, graphs, kernels and programs, and the
// queues, then the context. It is safe to call while other goroutines use
// the context: it waits for the calls in progress, and every later call
// returns an error wrapping ErrClosed, but Free and Release of the
// context's objects, which return nil (Close released them). Close is
// idempotent; a nil Context is an error wrapping ErrInvalidArgument.
//
// Close of a context that recorded a device fault (Err), or that notices
// one as it finishes the queues, waits for no device work: it releases
// everything all the same, ignoring the errors that only repeat the
// fault, and returns one error, the fault's.
func (c *Context) Close() error {
	if c == nil {
		return fmt.Errorf("close context: %w: nil context", ErrInvalidArgument)
	}
	if c.closed.Swap(true) {
		return nil
	}
	c.drain()
	c.mu.Lock()
	qs := c.queues
	c.queues = nil
	c.mu.Unlock()
	// Drain the queues before anything they use is released.
	var errs []error
	for _, q := range qs {
		if !c.faulted() {
			if err := q.drv.Finish(); err != nil {
				errs = append(errs, c.recordFault(qs, q, fmt.Errorf("close context: finish queue on %q: %w", q.dev.Name, err)))
			}
		}
		q.drainTrace(!c.faulted())
	}
	errs = append(errs, c.closeGraphs()...)
	errs = append(errs, c.closeLive()...)
	errs = append(errs, c.closeAllocators()...)
	errs = append(errs, c.closeImages()...)
	for _, q := range qs {
		if err := q.drv.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release queue on %q: %w", q.dev.Name, err))
		}
	}
	cacheErrs := c.pc.Close()
	cacheErrs = append(cacheErrs, c.closeInstances()...)
	c.closeRemote()
	for _, err := range cacheErrs {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	c.releaseDecls()
	if err := c.closeTracing(); err != nil {
		errs = append(errs, err)
	}
	if err := c.drv.Release(); err != nil {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	if f := c.fault.Load(); f != nil {
		return fmt.Errorf("close context: %w", f) // the release errors only repeat it
	}
	return errors.Join(errs...)
}

// closeGuard makes Context.Close safe under concurrent use. Every call that
// uses the context's driver objects runs between enter and exit; Close marks
// the context closed, then waits until no call is inside before it releases
// anything. A call that enters after Close has begun fails with ErrClosed,
// so no driver object is released while a call uses it, and none is used
// after it was released.
//
// enter increments a counter and then reads the closed flag; Close sets the
// flag and then reads the counter. Both are sequentially consistent atomics,
// so either the call sees the flag, or Close sees the call. Calls may nest.
type closeGuard struct {
	n    atomic.Int64 // calls inside
	mu   sync.Mutex
	idle sync.Cond // signalled when n drops to 0 after Close began; L is mu
}

// enter registers a call that uses c's driver objects. It fails with an
// error wrapping ErrClosed once Close has begun, with the context's
// *DeviceFault once it recorded one, and with one wrapping
// ErrInvalidArgument for a nil context. Every nil error is matched by one
// exit.
func (c *Context) enter() error {
	if c == nil {
		return fmt.Errorf("context: %w: nil context", ErrInvalidArgument)
	}
	c.guard.n.Add(1)
	if c.closed.Load() || c.fault.Load() != nil {
		c.exit()
		return c.enterError()
	}
	return nil
}

// enterError is enter's error once the context is closed or faulted.
func (c *Context) enterError() error {
	if c.closed.Load() {
		return c.closedError()
	}
	return c.fault.Load()
}

// closedError is the error of a call that entered c after its Close had
// begun: it names the context by its devices, and the fault if one was
// recorded before; the caller wraps it with the operation and its subject.
func (c *Context) closedError() error {
	if f := c.fault.Load(); f != nil {
		return fmt.Errorf("context on %s %w after a device fault: %w", c.deviceLabel(), ErrClosed, f)
	}
	return fmt.Errorf("context on %s %w", c.deviceLabel(), ErrClosed)
}

// exit ends a call that enter registered.
func (c *Context) exit() {
	if c.guard.n.Add(-1) == 0 && c.closed.Load() {
		c.wakeDrain()
	}
}

// drain waits until every call that entered before Close has exited: the
// context's calls, then those of each queue. Close calls it with c.closed
// set. Once no call of the context is inside, no queue is being created
// (NewQueue enters the context), so the queues are all there are.
func (c *Context) drain() {
	c.waitIdle(&c.guard.n)
	c.mu.Lock()
	qs := slices.Clone(c.queues)
	c.mu.Unlock()
	for _, q := range qs {
		c.waitIdle(&q.gate.n)
	}
}

// waitIdle waits until n, a count of calls inside, is 0. Close calls it
// with c.closed set, after which the call that brings a count to 0 wakes
// it (wakeDrain).
func (c *Context) waitIdle(n *atomic.Int64) {
	g := &c.guard
	g.mu.Lock()
	g.idle.L = &g.mu
	for n.Load() != 0 {
		g.idle.Wait()
	}
	g.mu.Unlock()
}

// wakeDrain wakes Close's drain.
func (c *Context) wakeDrain() {
	c.guard.mu.Lock()
	c.guard.idle.Broadcast()
	c.guard.mu.Unlock()
}

// queueGate counts the calls inside a queue's enter, as closeGuard counts
// the context's own: each queue has its own count, so that goroutines
// launching on queues of their own write no cache line in common (the
// context's count cost every launch a line that each goroutine took from
// the last). Queues made from a queue for a while (a recording queue)
// share its gate.
type queueGate struct {
	n atomic.Int64
}

// enter is Context.enter for a call on q, counted in q's gate; a nil q is
// an error wrapping ErrInvalidArgument. Every nil error is matched by one
// q.exit.
func (q *Queue) enter() error {
	if q != nil {
		q.gate.n.Add(1)
		if c := q.ctx; !c.closed.Load() && c.fault.Load() == nil {
			return nil
		}
	}
	return q.enterFailed()
}

// enterFailed is the error of enter on a nil queue, or on one whose
// context is closed or faulted, whose call it ends.
func (q *Queue) enterFailed() error {
	if q == nil {
		return fmt.Errorf("queue: %w: nil queue", ErrInvalidArgument)
	}
	q.exit()
	return q.ctx.enterError()
}

// exit ends a call that q.enter registered.
func (q *Queue) exit() {
	if q.gate.n.Add(-1) == 0 && q.ctx.closed.Load() {
		q.ctx.wakeDrain()
	}
}

// Device is a device of an open context: the fields that rt.Device
// copies, and what the core keeps of the device.
type Device struct {
	Name     string
	Vendor   string
	Type     DeviceType
	Platform string // the platform's name, which names the backend's driver
	// Version is the device's OpenCL version ("OpenCL 3.0 CUDA"),
	// DriverVersion its driver's, OpenCLCVersion its compiler's.
	Version, DriverVersion, OpenCLCVersion string
	// GlobalMemSize is the device's memory in bytes, MaxAllocSize the
	// largest buffer, LocalMemSize the local memory of a work-group.
	GlobalMemSize, MaxAllocSize, LocalMemSize int64
	// MemBaseAddrAlign is the alignment in bytes of a view's offset
	// (Buffer.View) on this device.
	MemBaseAddrAlign int64
	ComputeUnits     int
	MaxWorkGroupSize int
	Extensions       []string
	// Facade is rt's *Device for this device, which rt.OpenConfig sets
	// before it returns the context and nothing changes after: the core
	// cannot name rt's types, and rt hands out one *Device per device.
	Facade any

	info  driver.DeviceInfo // as the backend gave it
	index int               // position among the context's devices
	lim   launchLimits      // what one launch may ask of the device (workgroup.go)

	tr        *trace.Device // trace handle; see "Tracing in rt"
	clockOnce sync.Once     // aligns the device clock for tracing
	clockErr  time.Duration // bound on the aligned device times' error
}

// newDevice returns the Device of d, the context's i-th.
func newDevice(d driver.DeviceInfo, i int) *Device {
	return &Device{
		Name: d.Name, Vendor: d.Vendor, Type: deviceType(d.Type), Platform: d.Platform,
		Version: d.Version, DriverVersion: d.DriverVersion, OpenCLCVersion: d.OpenCLCVersion,
		GlobalMemSize: d.GlobalMemSize, MaxAllocSize: d.MaxAllocSize, LocalMemSize: d.LocalMemSize,
		MemBaseAddrAlign: d.MemBaseAddrAlign, ComputeUnits: d.ComputeUnits, MaxWorkGroupSize: d.MaxWorkGroupSize,
		Extensions: d.Extensions, info: d, index: i,
		lim: launchLimits{items: d.MaxWorkItemSizes, groups: d.MaxGroups, total: d.MaxGroupsTotal},
	}
}

// String returns the device's name and platform, "NAME (PLATFORM)", as
// messages name it.
func (d *Device) String() string { return d.info.Label() }

// Tracing in rt.
//
// Every context has a *trace.Tracer (Context.Tracer): the one given in
// Config.Tracer, else one opened from Config.Trace (DGEN_TRACE), else an
// empty one that Go code may subscribe to later. Every device has a
// *trace.Device and every queue a *trace.Queue, so trace points never test
// for nil: with no subscriber each costs one atomic load (trace.Queue.Begin,
// trace.Device.MemAlloc, ...) and allocates nothing.
//
// Tasks. beginTask returns a *trace.Task, nil when tracing is off (every
// method of Task does nothing on nil). A command that returns an Event
// gives it the task for good (newTracedEvent: later commands depend on it);
// any other releases its task once it is done with it (trace.Task.EndRelease
// where nothing needs it after its end, trace.Task.Release after the pending
// list took its copy), so that a traced Submit or transfer allocates
// nothing. The pending list keeps a copy of a sampled task.
//
// Call sites. beginTask records the Go source location of the command. Its
// skip argument, and the skip argument of every internal helper that passes
// it on (command, transfer, launch), counts the frames between the
// helper's caller and the user's code: facade (1, rt's method that calls
// the core's) when the helper is called by the core's exported method that
// rt's forwards to (Queue.Marker calls beginTask(..., facade)); a function
// that adds a frame between the user and the helper passes skip+1
// (Buffer.Write and Buffer.WriteAt call writeAt(..., facade), and writeAt
// calls transfer(..., skip+1)). runtime.Callers counts inlined frames, so
// whether the compiler inlines rt's forwarder changes nothing. rt's tests
// of call sites (tracing_test.go, through rt) check every count.
// A generated Enqueue reaches q.submit through codegen.Submit and
// SubmitSpec (launch.go), which passes skip 2, so the location is the
// user's call of Enqueue; EnqueueEvent reaches q.launch the same way
// through codegen.Launch and LaunchSpec. rt/raw's Launch and Submit reach
// q.launch and q.submit through Launch and Submit (raw.go), which pass
// skip 1.
//
// Device time. The host-side task graph needs no profiling queue and no
// event. Queues profile when tracing is configured (Config.Trace or
// Config.Tracer set) with device-time sampling above 0
// (trace.Tracer.SetDeviceSampling, DGEN_TRACE's device=N), and then only
// the sampled tasks (trace.Task.Sampled) need an event; when every task
// is sampled, queues are kernel-timed where the backend offers it
// (driver.KernelTimer; on CUDA, CUPTI's records). A sampled command
// with an event is kept, with its task, in its queue's pending list; the
// list is drained (device times read, through driver.Spanner where the
// backend has it, and reported with trace.Task.Complete) on Queue.Finish,
// after Event.Wait, on Context.Close, and when it reaches a threshold: then
// a profiling queue waits for its newest command and reads every time at
// once, and a kernel-timed queue reads the times that have come, without
// blocking (only the completed prefix is read: the queue is in order). A
// sampled transfer is enqueued without blocking and waited for, so that it
// is reported at once. Submit, which creates no event, creates one for a
// sampled task (on a kernel-timed queue, one that only times the kernel:
// driver.KernelTimedQueue). An Event released by its owner before its
// times were read keeps its driver event in the list until they are.
//
// Hooks for other rt code: traceMem (buffers the driver allocates and
// releases), allocTracer (allocator.go: an allocator's driver allocations and
// releases, and its free-list reuses with Mem.Pooled set, on the device's
// trace handle), traceCache (program caches: hits, disk loads, evictions), beginTask with a skip (device-global accesses, with
// trace.GlobalRead or trace.GlobalWrite), newTracedEvent and addPending
// (device times of commands with events).

// facade is the frame of rt's method between the user and the core's
// exported method that it forwards to (see "Call sites" above).
const facade = 1

// openTracing sets up the context's tracer and the trace handles of its
// devices, before any queue is created.
func (c *Context) openTracing(cfg Config) error {
	switch {
	case cfg.Tracer != nil:
		c.tr = cfg.Tracer
		c.traced = true
	case cfg.Trace != "":
		c.traceLog = &lineLogger{l: c.log()}
		tr, err := trace.Open(cfg.Trace, c.traceLog) // summary and log without a path
		if err != nil {
			return err
		}
		c.tr, c.ownTracer, c.traced = tr, true, true
	default:
		c.tr, c.ownTracer = trace.New(), true
	}
	if c.traced && c.tr.DeviceSampling() > 0 {
		c.profiling, c.devTimes = true, true
	}
	for _, d := range c.devices {
		d.tr = c.tr.Device(d.index, d.String()) // "name (platform)": the platform names the backend
	}
	return nil
}

// Tracer returns the context's tracer. Subscribe to it to receive the
// context's trace events, and mark ranges of Go code with its Range and
// Mark methods. Device times are reported only when the context was opened
// with tracing configured (Config.Trace or Config.Tracer) and device-time
// sampling above 0, since queues profile only then.
func (c *Context) Tracer() *trace.Tracer {
	if c == nil {
		return nil
	}
	return c.tr
}

// closeTracing closes the tracer if the context opened it. Close has
// drained the queues' pending tasks.
func (c *Context) closeTracing() error {
	if !c.ownTracer {
		return nil
	}
	err := c.tr.Close()
	if c.traceLog != nil {
		c.traceLog.Flush()
	}
	if err != nil {
		return fmt.Errorf("close context: %w", err)
	}
	return nil
}

// initQueueTrace gives a new queue its trace handle and, for the first
// profiling queue of a traced device, aligns the device clock to the host
// clock (see syncClock).
func (c *Context) initQueueTrace(q *Queue) error {
	d := q.dev
	q.tq = d.tr.Queue(q.id, "queue "+strconv.Itoa(q.id), true)
	if !c.devTimes || !q.profiling {
		return nil
	}
	var err error
	d.clockOnce.Do(func() { err = q.syncClock() })
	return err
}

// clockSamples is the number of marker round trips syncClock makes.
const clockSamples = 8

// syncClock aligns the device's profiling clock to the tracer's host clock.
// It enqueues a marker on an idle queue, reading the host clock h0 just
// before and h1 just after waiting for it; the marker's profiling end time
// lies between them in host time. The sample with the shortest round trip
// is kept and its midpoint used, so device times are aligned to within
// half that round trip (d.clockErr), plus the drift of the device clock
// since the sample (trace.Device.SyncClock corrects drift once it has
// samples 10 ms apart).
func (q *Queue) syncClock() error {
	d := q.dev
	best := int64(-1)
	var host, dev int64
	for range clockSamples {
		h0 := q.ctx.tr.Now()
		ev, err := q.drv.Marker(nil)
		if err != nil {
			return fmt.Errorf("synchronise clock of %q: %w", d.Name, err)
		}
		err = ev.Wait()
		h1 := q.ctx.tr.Now()
		var t driver.Timing
		if err == nil {
			t, err = ev.Profile()
		}
		ev.Release()
		if err != nil {
			return fmt.Errorf("synchronise clock of %q: %w", d.Name, err)
		}
		if rt := h1 - h0; best < 0 || rt < best {
			best, host, dev = rt, h0+rt/2, int64(t.Ended)
		}
	}
	d.clockErr = time.Duration(best / 2)
	d.tr.SyncClock(host, dev)
	return nil
}

// clockError returns the bound on the error of the device times that
// tracing reports for d: half the shortest marker round trip measured when
// the clocks were aligned, 0 if they were not (tracing off).
func (d *Device) clockError() time.Duration {
	if d == nil {
		return 0
	}
	return d.clockErr
}

// pendingTask is a traced command whose device times are not yet known.
type pendingTask struct {
	task trace.Task
	ev   *Event       // the command's Event; nil when drv is owned here
	drv  driver.Event // the driver event, released here when ev is nil
}

// pendingList is a queue's list of pending tasks, in enqueue order.
type pendingList struct {
	mu    sync.Mutex
	tasks []pendingTask
	next  int // drain when len(tasks) reaches next
}

// pendingDrainAt is the smallest length at which a pending list is drained
// without blocking.
const pendingDrainAt = 256

// drainTrace reports the device times of the pending tasks that have
// completed. Without wait it never blocks: it stops at the first task not
// complete (the queue is in order, so the rest are most likely not
// complete either). With wait it first waits for the newest task, after
// which (in order) every one has completed, and reads them all without
// asking: asking a driver about one command at a time between launches
// costs CUDA a flush of its launch queue per question (rawcu traced:
// twice the launch itself), so the times of a launch loop are read in
// batches.
func (q *Queue) drainTrace(wait bool) {
	p := &q.pend
	p.mu.Lock()
	defer p.mu.Unlock()
	if wait && len(p.tasks) > 0 {
		wait = p.tasks[len(p.tasks)-1].driverEvent().Wait() == nil
	}
	n := 0
	for ; n < len(p.tasks); n++ {
		pt := &p.tasks[n]
		if !pt.report(wait) {
			break
		}
	}
	rest := copy(p.tasks, p.tasks[n:])
	clear(p.tasks[rest:])
	p.tasks = p.tasks[:rest]
	p.next = 2 * rest
}

// driverEvent returns the driver event of pt's command.
func (pt *pendingTask) driverEvent() driver.Event {
	if pt.ev == nil {
		return pt.drv
	}
	pt.ev.mu.Lock()
	defer pt.ev.mu.Unlock()
	return pt.ev.drv // its owner leaves it to us while pending
}

// report reports the device times of a completed task and releases what it
// holds; it returns false, changing nothing, if the command has not
// completed. With complete set the caller knows that it has.
func (pt *pendingTask) report(complete bool) bool {
	if pt.ev != nil {
		e := pt.ev
		e.mu.Lock()
		defer e.mu.Unlock()
		if !reportDriver(&pt.task, e.drv, complete) {
			return false
		}
		e.pending = false
		if e.released {
			// Its owner released it while its times were pending: the
			// driver event was left to us.
			e.dropDriver()
		}
		return true
	}
	if !reportDriver(&pt.task, pt.drv, complete) {
		return false
	}
	pt.drv.Release()
	return true
}

// reportDriver reports the device times of drv's command to tk, unless the
// command has not completed (false; with complete set the caller knows
// that it has). A failed command is reported without device times.
func reportDriver(tk *trace.Task, drv driver.Event, complete bool) bool {
	start, end, done, err := span(drv, complete)
	if done && err == nil {
		tk.Complete(int64(start), int64(end))
	}
	return done
}

// span returns the device times of drv's command once it has completed
// (done), without blocking: in one call where the backend is a
// driver.Spanner, else through Status (unless complete says that it has
// completed) and Profile. A failed command is done, with an error.
func span(drv driver.Event, complete bool) (start, end uint64, done bool, err error) {
	if sp, ok := drv.(driver.Spanner); ok {
		return sp.Span()
	}
	if !complete {
		if s, err := drv.Status(); err == nil && s != driver.StatusComplete {
			return 0, 0, false, nil
		}
	}
	t, err := drv.Profile()
	return t.Started, t.Ended, true, err
}

// traceMem reports an allocation (alloc true) or release of device memory
// on the context's device dev: newMem and releaseToDriver report driver
// allocations and releases (an allocator reports its own through
// allocTracer). With no memory subscriber it costs one atomic load.
func (c *Context) traceMem(dev int, m trace.Mem, alloc bool) {
	d := c.devices[dev].tr
	if alloc {
		d.MemAlloc(m)
	} else {
		d.MemRelease(m)
	}
}

// memTrace describes m for a memory event: its size, and its address as
// the handle that pairs an allocation with its release.
func memTrace(m *Mem) trace.Mem {
	return trace.Mem{Size: m.size, Handle: uint64(uintptr(unsafe.Pointer(m)))}
}

// traceCache reports a program cache event on the context's device dev:
// (*Context).build reports trace.Build with the build's duration; the
// program caches report MemoryHit, DiskHit (with the load's duration) and
// Eviction through it. With no cache subscriber it costs one atomic load.
func (c *Context) traceCache(dev int, ev trace.Cache) {
	c.devices[dev].tr.CacheEvent(ev)
}

// traceNow returns the tracer's clock, or 0 when no cache subscriber would
// use it, so that untraced builds read no clock.
func (c *Context) traceNow() int64 {
	if !c.tr.Enabled() {
		return 0
	}
	return c.tr.Now()
}

// newTracedEvent wraps a command's driver event with its task, which the
// Event keeps (it is never released: later commands may depend on it), and
// a copy of which goes to the queue's pending list when device times are
// reported.
func (q *Queue) newTracedEvent(drv driver.Event, name string, tk *trace.Task) *Event {
	e := newEvent(q, drv, name)
	if tk != nil {
		e.task = tk
		if q.wantsEvent(tk) {
			e.pending = true
			q.addPending(tk, e, nil)
		}
	}
	return e
}

// tracedTransfer runs a traced transfer without blocking, waits for its
// event and reports its device times at once.
func (q *Queue) tracedTransfer(x *xfer, tk *trace.Task, dw []driver.Event) error {
	// The driver keeps the host pointer after the enqueue returns, until
	// the copy is done: pin the caller's memory for that long, as cgo's
	// rules ask of Go memory that C retains.
	var pin runtime.Pinner
	pin.Pin(x.host)
	defer pin.Unpin()
	ev, err := x.enqueue(q, dw, false)
	tk.End()
	if err != nil {
		return fmt.Errorf("%s on %q: %w", x.op, q.dev.Name, err)
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return fmt.Errorf("%s on %q: %w", x.op, q.dev.Name, err)
	}
	// The queue is in order: what was enqueued before has completed too.
	q.drainTrace(false)
	reportDriver(tk, ev, true)
	return nil
}

// The context's kernel/program cache is package rt/internal/progcache;
// this file connects it to the context: it builds through the context's
// driver and traces through its tracer.

// Stats returns the context's statistics: what its program cache did
// (Cache) and what its allocators hold and did (Alloc). It works after
// Close too, and on a nil context returns zero statistics.
func (c *Context) Stats() stats.Context {
	return stats.Context{Cache: c.cacheStats(), Alloc: c.allocStats()}
}

// cacheStats returns the counters of the context's program cache.
func (c *Context) cacheStats() stats.Cache {
	if c == nil {
		return stats.Cache{}
	}
	s := c.pc.Stats()
	return stats.Cache{
		Builds: s.Builds, DiskHits: s.DiskHits, MemHits: s.MemHits, BuildErrors: s.BuildErrors,
		Retries: s.Retries, Evictions: s.Evictions, OOMFlushes: s.OOMFlushes, KernelMisses: s.KernelMisses,
		Programs: s.Programs, Bytes: s.Bytes, Remote: c.remoteStats(), Tuned: c.tuneTimed.Load(), TuneRecords: c.tuneRecords.Load(),
	}
}

// persistentCache returns the persistent cache beneath the context's
// program cache; it is disabled (Enabled false) when the configuration
// turns it off or its directory cannot be used.
func (c *Context) persistentCache() *diskcache.Cache {
	if c == nil {
		return nil
	}
	return c.disk
}

// initCache opens the remote tier and the persistent cache that cfg
// configures, warning when one cannot be used, and sets up the context's
// program cache over them.
func (c *Context) initCache(cfg CacheConfig) {
	dcfg := cfg.Disk.diskConfig(c.log())
	dcfg.Remote = c.openRemote(&cfg, dcfg.Trace)
	disk, err := diskcache.Open(dcfg)
	c.disk = disk
	if err != nil {
		c.log().Warn("dgen: persistent program cache off", "dir", cfg.Disk.Dir, "err", err)
	}
	pcfg := progcache.Config{
		InMemory:          cfg.InMemory,
		EvictionThreshold: cfg.EvictionThreshold,
		CompileOptions:    cfg.CompileOptions,
		Disk:              disk,
		Faulted:           c.faultErr,
		Hooks: progcache.Hooks{
			Event: func(ev trace.Cache) { c.traceCache(0, ev) },
			Now:   c.traceNow,
			Log:   dcfg.Trace,
		},
	}
	for _, d := range c.devices {
		pcfg.Devices = append(pcfg.Devices, diskcache.Device{Platform: d.Platform, Name: d.Name, Version: d.Version, DriverVersion: d.DriverVersion})
	}
	c.pc.Init((*cacheBuilder)(c), pcfg)
}

// log returns the context's logger: Config.Logger, else slog.Default().
func (c *Context) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// cacheBuilder is the context as the program cache's builder.
type cacheBuilder Context

func (b *cacheBuilder) Enter(img *progcache.Image) error {
	c := (*Context)(b)
	if err := c.enter(); err != nil {
		if img != nil {
			return fmt.Errorf("build program %s: %w", img.Name, err)
		}
		return fmt.Errorf("build program: %w", err)
	}
	if img != nil {
		if err := checkImageOptions(img); err != nil {
			c.exit()
			return fmt.Errorf("build program %s: %w", img.Name, err)
		}
	}
	return nil
}

func (b *cacheBuilder) Exit() { (*Context)(b).exit() }

func (b *cacheBuilder) Build(name, source, options string) (driver.Program, error) {
	p, err := (*Context)(b).buildDirect(buildRequest{name: name, source: source, options: options})
	if err != nil {
		return nil, err
	}
	return p.drv, nil
}

func (b *cacheBuilder) Load(name string, binaries [][]byte, options string) (driver.Program, error) {
	p, err := (*Context)(b).buildDirect(buildRequest{name: name, binaries: binaries, options: options})
	if err != nil {
		return nil, err
	}
	return p.drv, nil
}

// NewKernel makes the cache's kernel object of (program, name): the
// prototype of the kernel's instances (instance.go).
func (b *cacheBuilder) NewKernel(p driver.Program, program, name string) (*Kernel, error) {
	k, err := (&builtProgram{ctx: (*Context)(b), drv: p, name: program}).kernel(name)
	if err == nil {
		k.pool = new(kernelPool)
	}
	return k, err
}

// ReleaseKernel releases a prototype and its spare instances.
func (b *cacheBuilder) ReleaseKernel(k *Kernel) error {
	k.pool.kill()
	return k.Release()
}

// build is the one function through which every program is made: a
// program built from source goes through the cache, keyed by the hash of
// its source with its name as the image id; one loaded from binaries the
// caller gave is made directly.
func (c *Context) build(req buildRequest) (*builtProgram, error) {
	return c.buildContext(context.Background(), req)
}

// programFor returns img built for every device of the context through
// the cache. The caller may Release the program it gets; the cache keeps
// its own reference. A compile error wraps ErrBuildFailed and carries the
// build log.
func (c *Context) programFor(img *progcache.Image) (*builtProgram, error) {
	return c.programForContext(context.Background(), img)
}

// devIndex returns the index of q's device in the context, or -1 when q is
// not a queue of the context, which the cache reports as an invalid
// argument.
func (c *Context) devIndex(q *Queue) int {
	if q == nil || q.ctx != c {
		return -1
	}
	return q.dev.index
}

// remoteFlushWait bounds how long Close waits for publishes to the remote
// tier that are still in flight.
const remoteFlushWait = 2 * time.Second

// openRemote connects the context's cache to the shared remote tier that
// cfg.Remote names, if any, and returns it to be put beneath the
// persistent cache; its trace goes to trace. A remote that cannot be
// opened is logged once and left out.
func (c *Context) openRemote(cfg *CacheConfig, trace io.Writer) diskcache.Remote {
	if cfg.Remote.URL == "" {
		return nil
	}
	r, err := diskcache.OpenRemote(diskcache.RemoteConfig{URL: cfg.Remote.URL, Getenv: cfg.Remote.Getenv,
		Logger: c.log(), Trace: trace, Events: c.remoteEvent})
	if err != nil || r == nil {
		if err == nil {
			err = errors.New("no tier")
		}
		c.log().Warn("dgen: remote program cache off", "err", err)
		return nil
	}
	c.remote = r
	return r
}

// remoteEvent traces remote hits and publishes as cache events.
func (c *Context) remoteEvent(e diskcache.RemoteEvent) {
	op := trace.RemoteHit
	if e.Op == diskcache.RemotePublish {
		op = trace.RemotePublish
	}
	c.traceCache(0, trace.Cache{Op: op, Program: e.Program, Duration: e.Duration.Nanoseconds()})
}

// remoteStats returns the remote tier's counters; zero without one.
func (c *Context) remoteStats() stats.Remote {
	if c.remote == nil {
		return stats.Remote{}
	}
	return stats.Remote(c.remote.Stats())
}

// closeRemote waits a little for publishes in flight, disconnects, and
// adds the counters to those recorded in the cache directory, which
// `dgen cache stat` shows.
func (c *Context) closeRemote() {
	if c.remote == nil {
		return
	}
	c.remote.Close(remoteFlushWait)
	c.disk.Wait()
	if c.disk.Enabled() {
		if err := diskcache.RecordRemote(c.disk.Dir(), c.remote.Stats()); err != nil {
			c.pc.Logf("%v", err)
		}
	}
}

// specValue is the value of one specialization constant as a build sees
// it: the macro Name defined to Value (-D Name=Value). Value is an OpenCL C
// literal such as "16", "-3" or "0.5f"; specLiteral formats one.
type specValue struct {
	Name  string
	Value string
}

// identChar reports whether r may appear in a C identifier: a letter or
// underscore, or, where digit is true (not the first character), a digit.
func identChar(r rune, digit bool) bool {
	return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || digit && '0' <= r && r <= '9'
}

// checkSpecValue reports whether name is a C identifier and value a
// literal that can go on a build command line unquoted.
func checkSpecValue(name, value string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidArgument)
	}
	for i, r := range name {
		if !identChar(r, i > 0) {
			return fmt.Errorf("%w: %q is not a C identifier", ErrInvalidArgument, name)
		}
	}
	if value == "" {
		return fmt.Errorf("%w: empty value", ErrInvalidArgument)
	}
	if strings.ContainsAny(value, " \t\r\n\v\f\"'\\") {
		return fmt.Errorf("%w: value %q contains a space, quote or backslash", ErrInvalidArgument, value)
	}
	return nil
}

// setSpecValue sets the specialization constant name to value for every
// program that the context builds from now on. A name that no registered
// //dgen:specconst constant has, or a value that does not parse as the
// constant's type, is an error wrapping ErrInvalidArgument; a value outside
// the bounds the directive declares (min=, max=) one wrapping
// ErrOutOfRange. The value is kept as specLiteral writes it (so that "16"
// and "0x10" share a build) and becomes -D name=value
// at build and part of every cache key, so that a changed value builds
// (once) and caches another program, and setting an earlier value again
// finds the earlier program. Commands already enqueued are not affected.
// SpecConst.Set, for a //dgen:specconst declaration, calls it with the
// constant's name and specLiteral of its value.
func (c *Context) setSpecValue(name, value string) error {
	if err := c.enter(); err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	defer c.exit()
	if err := checkSpecValue(name, value); err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	canon, err := checkRegistered(name, value) // specvalue.go
	if err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	c.pc.SetSpec(name, canon)
	return nil
}

// clearSpecValue removes the value of the specialization constant name, so
// that programs see its default again. A name that no registered constant
// has is an error wrapping ErrInvalidArgument.
func (c *Context) clearSpecValue(name string) error {
	if err := c.enter(); err != nil {
		return fmt.Errorf("clear specialization constant %s: %w", name, err)
	}
	defer c.exit()
	if len(specChecks(name)) == 0 {
		return fmt.Errorf("clear specialization constant %s: %w: no //dgen:specconst declaration registers a constant of that name", name, ErrInvalidArgument)
	}
	c.pc.ClearSpec(name)
	return nil
}

// specValues returns the specialization-constant values set on the
// context, sorted by name.
func (c *Context) specValues() []specValue {
	if c == nil {
		return nil
	}
	set := c.pc.Specs()
	if len(set) == 0 {
		return nil
	}
	vals := make([]specValue, len(set))
	for i, v := range set {
		vals[i] = specValue(v)
	}
	return vals
}

// specLiteral formats v, a boolean or number, as the OpenCL C literal that
// setSpecValue expects: integers in decimal (unsigned with a u suffix where
// needed), float32 with an f suffix and float64 in full precision, both
// exactly round-tripping; booleans as 1 or 0.
func specLiteral[T any](v T) (string, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		if rv.Bool() {
			return "1", nil
		}
		return "0", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Int64:
		n := rv.Int()
		if n == math.MinInt64 {
			return "(-9223372036854775807L-1)", nil
		}
		return strconv.FormatInt(n, 10) + "L", nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10) + "u", nil
	case reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10) + "UL", nil
	case reflect.Float32:
		f := rv.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("specialization constant literal: %w: %v", ErrInvalidArgument, f)
		}
		return strconv.FormatFloat(f, 'e', -1, 32) + "f", nil
	case reflect.Float64:
		f := rv.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("specialization constant literal: %w: %v", ErrInvalidArgument, f)
		}
		return strconv.FormatFloat(f, 'e', -1, 64), nil
	}
	return "", fmt.Errorf("specialization constant literal: %w: %T is not a boolean or number", ErrInvalidArgument, v)
}

// Sentinel errors. Errors returned by rt wrap one of these where it applies,
// so that callers can test them with errors.Is.
var (
	// ErrOutOfMemory reports that the device or the host ran out of memory or
	// resources.
	ErrOutOfMemory = driver.ErrOutOfMemory
	// ErrBuildFailed reports that a program did not compile or link; the
	// DeviceError that wraps it carries the build log.
	ErrBuildFailed = driver.ErrBuildFailed
	// ErrNoKernel reports a kernel name that the program does not define.
	ErrNoKernel = driver.ErrNoKernel
	// ErrFreed reports the use of a buffer after Free, or a second Free.
	ErrFreed = errors.New("buffer already freed")
	// ErrOutOfRange reports an offset or length outside a buffer or a
	// device global. Nothing is read or written.
	ErrOutOfRange = errors.New("out of range")
	// ErrNoDevice reports that no device matches the selection.
	ErrNoDevice = devsel.ErrNoDevice
	// ErrNoBackend reports that no backend is registered under the name
	// asked for; import rt/opencl to register the OpenCL backend.
	ErrNoBackend = driver.ErrNoBackend
	// ErrDeviceFault reports a fault of a command on the device: the
	// context that it poisoned returns its *DeviceFault from every call.
	ErrDeviceFault = driver.ErrDeviceFault
	// ErrClosed reports the use of a closed context, or of an object that
	// its context's Close released.
	ErrClosed = progcache.ErrClosed
	// ErrReleased reports the use of an Event after its Release, while its
	// context is open: waiting for it, or passing it in a wait list.
	ErrReleased = errors.New("event released")
	// ErrInvalidArgument reports an argument that cannot be right whatever
	// the device says (a nil buffer, a zero-sized range, ...).
	ErrInvalidArgument = progcache.ErrInvalidArgument
	// ErrNotGenerated reports a declaration that dgen has not registered:
	// its package needs `go generate`.
	ErrNotGenerated = desc.ErrNotGenerated
	// ErrStale reports a program whose source files changed after go
	// generate read them: the device image in the build is old. The error
	// names the file; run go generate.
	ErrStale = desc.ErrStale
)

// DeviceError is the backends' error, which rt names DeviceError.
type DeviceError = driver.Error
