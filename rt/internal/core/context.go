package core

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Contexts: the Context type, the close guard and the queues' gates that
// make Close safe under concurrent use, and the devices of a context.
// Beside this file: Open and Close (lifecycle.go), how a backend and its
// devices are chosen (backend.go), queues (queue.go), tracing
// (tracing.go), the program cache and the remote tier beneath it
// (cache.go), and the specialization-constant values of a context
// (specvalue.go).

// Context is an open backend context over one or more devices of one
// platform, with a default queue on its first device. It is safe for
// concurrent use. Close it when done.
type Context struct {
	// Invariants. The fields are of three kinds, and each group below says
	// which:
	//   - Set by OpenConfig before it returns the context, and never changed
	//     after: they are read without a lock.
	//   - Atomics: closed and draining go from false to true once.
	//   - Parts that own their state, each with its invariant on its type:
	//     settings, tracing, queues, fault, guard, counters, allocs, cache,
	//     decls, graphs, live, instances, images, pool, shut and health
	//     (shutdown.go). No part holds its lock across a driver call but
	//     the few listed in docs/ARCHITECTURE.md ("Concurrency"), with why:
	//     none is on the path of a request that does not share the object
	//     with another goroutine, but fault.launchMu, under
	//     Config.SyncLaunches.
	//
	// The close guard: every call that uses a driver object runs between an
	// enter and an exit, the context's (guard) or its queue's (Queue.gate);
	// Close sets closed, waits for both counts to drain, and only then
	// releases anything, so that no driver object is released under a call,
	// and a call that enters after Close fails with ErrClosed (closeGuard).
	//
	// The fields that a launch reads (closed, draining, fault,
	// queues.multi) lie together near the start.

	// Set by OpenConfig, never changed after.
	drv      driver.Context
	backend  string // the backend's registered name
	devices  []*Device
	queue    *Queue          // the default queue, on devices[0]
	settings contextSettings // what Config chose (config.go)
	tracing  contextTracing  // the tracer and how it was configured (tracing.go)

	// closed is set once, by Close.
	closed atomic.Bool
	// draining is set once, by Shutdown, under pool.mu: from then on only
	// the queues that the pool handed out take calls (shutdown.go).
	draining atomic.Bool
	fault    faultState // the device fault and Config.SyncLaunches (fault.go)
	queues   queueSet   // every queue that Close releases (queue.go)
	guard    closeGuard // the context's calls in progress, which Close waits for

	// Parts that own their state.
	counters  contextCounters // stats.go
	allocs    allocators      // by device, each made on first use (allocator.go)
	cache     contextCache    // the program cache and the persistent cache and remote tier beneath it (cache.go)
	decls     declState       // storage of the device globals of registered declarations (global.go)
	graphs    graphSet        // live graphs, which Close releases (graph.go)
	live      liveSet         // what the context made for its user to release, which Close releases if the user did not (live.go)
	instances instanceSet     // kernel instances of generated specs, which Close releases (instance.go)
	images    imageState      // formats, samplers, images of allocation sites (image.go)
	pool      queuePool       // the queues of AcquireQueue; max is set by OpenConfig (queuepool.go)
	shut      shutdownState   // Shutdown's drain (shutdown.go)
	health    healthProbe     // Health's probe queues (shutdown.go)
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

// log returns the context's logger: Config.Logger, else slog.Default().
func (c *Context) log() *slog.Logger {
	if c.settings.logger != nil {
		return c.settings.logger
	}
	return slog.Default()
}

// sameContext checks that an object of context of, named what, may be
// used with context c: an error wrapping ErrInvalidArgument that names
// both contexts' devices if not. OpenCL leaves the use of one context's
// objects in another undefined.
func (c *Context) sameContext(what string, of *Context) error {
	if of == c {
		return nil
	}
	return fmt.Errorf("%w: %s belongs to the context on %s, not to this one on %s", ErrInvalidArgument, what, of.deviceLabel(), c.deviceLabel())
}

// labels names devs in messages: their names, quoted, joined.
func labels(devs []driver.DeviceInfo) string {
	var s []string
	for _, d := range devs {
		s = append(s, strconv.Quote(d.Name))
	}
	return strings.Join(s, ", ")
}

// deviceLabel names the context by its devices in messages: device "NAME",
// or devices "NAME", "NAME", ....
func (c *Context) deviceLabel() string {
	if len(c.devices) == 1 {
		return fmt.Sprintf("device %q", c.devices[0].Name)
	}
	var infos []driver.DeviceInfo
	for _, d := range c.devices {
		infos = append(infos, d.info)
	}
	return "devices " + labels(infos)
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
	// done is closed when the first Close has released everything, and
	// err is what it returned, written before (closeWait); done is made
	// by OpenConfig.
	done chan struct{}
	err  error
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
	if c.closed.Load() || c.fault.recorded.Load() != nil {
		c.exit()
		return c.enterError()
	}
	return nil
}

// enterError is enter's error once the context is closed or faulted,
// and a queue's once the context drains (Shutdown).
func (c *Context) enterError() error {
	if c.closed.Load() {
		return c.closedError()
	}
	if f := c.fault.recorded.Load(); f != nil {
		return f
	}
	return c.drainingError()
}

// closedError is the error of a call that entered c after its Close had
// begun: it names the context by its devices, and the fault if one was
// recorded before; the caller wraps it with the operation and its subject.
func (c *Context) closedError() error {
	if f := c.fault.recorded.Load(); f != nil {
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
// share its gate, and with it its driver queue: the gate also says
// whether the queue was released (Queue.Release) and counts the holders
// of the driver queue.
type queueGate struct {
	n atomic.Int64
	// holders counts the goroutines that hold a queue of the context's
	// pool (AcquireQueue): written under the pool's mutex, read without it
	// by enter while the context drains (Shutdown), which lets in the calls
	// on a queue that is held.
	holders atomic.Int32
	// released is set once, by Queue.Release, before it waits for the
	// calls inside; enter fails from then on.
	released atomic.Pointer[queueRelease]
	// refs counts the holders of the driver queue: the queue until Close
	// or Release, and each live pinned memory mapped through it, which
	// unmaps through it (pinned.go). The last one releases it (unref).
	refs atomic.Int32
}

// queueRelease is a Queue.Release in progress: done is closed once it
// has finished the queue (every command enqueued on it has completed), or
// failed to.
type queueRelease struct {
	done chan struct{}
}

// enter is Context.enter for a call on q, counted in q's gate; a nil q is
// an error wrapping ErrInvalidArgument, and so is a released q one
// wrapping ErrClosed. While the context drains (Shutdown), a call on a
// queue that no goroutine holds from the pool fails with an error
// wrapping ErrShuttingDown. Every nil error is matched by one q.exit.
func (q *Queue) enter() error {
	if q != nil {
		q.gate.n.Add(1)
		if c := q.ctx; !c.closed.Load() && !c.draining.Load() && c.fault.recorded.Load() == nil && q.gate.released.Load() == nil {
			return nil
		}
	}
	return q.enterFailed()
}

// enterFailed is the error of enter on a nil queue, or on one whose
// context is closed, faulted or draining, or that was released, whose
// call it ends; but a call on a held queue of a draining context goes on
// (nil).
func (q *Queue) enterFailed() error {
	if q == nil {
		return fmt.Errorf("queue: %w: nil queue", ErrInvalidArgument)
	}
	c := q.ctx
	released := q.gate.released.Load() != nil
	if !released && !c.closed.Load() && c.fault.recorded.Load() == nil && q.gate.holders.Load() > 0 {
		return nil
	}
	q.exit()
	if released && !c.closed.Load() && c.fault.recorded.Load() == nil {
		return fmt.Errorf("queue %d on %q %w by its Release", q.id, q.dev.Name, ErrClosed)
	}
	return c.enterError()
}

// exit ends a call that q.enter registered.
func (q *Queue) exit() {
	if q.gate.n.Add(-1) == 0 && (q.ctx.closed.Load() || q.gate.released.Load() != nil) {
		q.ctx.wakeDrain()
	}
}

// hold enters q's gate for a call that work on another queue makes on q
// (a marker that orders a reuse after a use on q, a wait for a transfer
// on q that used pinned memory), whatever the context's state: the caller
// is inside an enter of its own, which Close waits for. Once q's Release
// has begun, hold enters nothing and returns false, after waiting until
// Release has finished q: every command on q has completed then, so the
// caller has nothing to order or wait for. A true is matched by one
// q.exit.
func (q *Queue) hold() bool {
	q.gate.n.Add(1)
	if r := q.gate.released.Load(); r != nil {
		q.exit()
		<-r.done
		return false
	}
	return true
}

// unref drops a holder of q's driver queue (queueGate.refs), releasing it
// when it was the last.
func (q *Queue) unref() error {
	if q.gate.refs.Add(-1) != 0 {
		return nil
	}
	if err := q.drv.Release(); err != nil {
		return fmt.Errorf("release queue %d on %q: %w", q.id, q.dev.Name, err)
	}
	return nil
}

// Device is a device of an open context, as its backend describes it.
// Its fields are for reading. A context's Devices, and its queues'
// Device, return the same *Device for each device.
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
	// Facade holds rt's *Device for this device, which rt makes on the
	// device's first use and stores with CompareAndSwap, so that rt hands
	// out one *Device per device: the core cannot name rt's types.
	Facade atomic.Value

	info  driver.DeviceInfo // as the backend gave it
	index int               // position among the context's devices
	lim   launchLimits      // what one launch may ask of the device (workgroup.go)

	tr        *trace.Device // trace handle; see "Tracing in rt"
	clockOnce sync.Once     // aligns the device clock for tracing
	clockErr  time.Duration // bound on the aligned device times' error

	budget memBudget // the bytes the context holds on the device, within Config.MemoryLimit (budget.go)

	priorityWarned [numPriorities]atomic.Bool // a priority the device lacks was warned of (priority.go)
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

// launchLimits are what one launch may ask of a device beyond the
// work-group size (driver.DeviceInfo's MaxWorkItemSizes, MaxGroups and
// MaxGroupsTotal), copied when the context opens; 0 where the backend
// sets no limit.
type launchLimits struct {
	items  [3]int64 // work-items of a work-group, per dimension
	groups [3]int64 // work-groups per dimension
	total  int64    // work-groups in all
}
