package core

import (
	"context"
	"fmt"
	"runtime"
	rtrace "runtime/trace"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

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
// helper's caller and the core's exported function or method that the
// user's call entered through: 0 when the helper is called by that entry
// point (Queue.Marker calls beginTask(..., 0)); a function that adds a
// frame between the entry point and the helper passes skip+1 (Buffer.Write
// and Buffer.WriteAt call writeAt(..., 0), writeAt calls
// hostCopy(..., skip+1), and hostCopy calls transfer(..., skip+1)). Every
// entry point is called by exactly one frame of a facade between it and
// the user (rt's generated forwarder, rt/raw's function, rt/codegen's
// Submit or Launch), which the trace points (beginTask, goTrace,
// goTraceAlloc, beginLaunch, recording's Site, a graph's launch) count on
// their own. runtime.Callers counts inlined
// frames, so whether the compiler inlines the forwarder changes nothing.
// rt's tests of call sites (tracing_test.go) check every count. A
// generated Enqueue reaches q.launch through codegen.Submit and SubmitSpec
// (generated.go), which passes skip 1 for the Enqueue above codegen's
// frame, so the location is the user's call of Enqueue; EnqueueEvent
// reaches it the same way through codegen.Launch and LaunchSpec. rt/raw's
// Launch and Submit reach it through Launch and Submit (raw.go), which
// pass skip 0.
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
// releases), allocTracer (allocator.go: an allocator's driver allocations
// and releases, and its free-list reuses with trace.Mem.Pooled set, on the
// device's trace handle), traceCache (program caches: hits, disk loads,
// evictions), beginTask with a skip (device-global accesses, with
// trace.GlobalRead or trace.GlobalWrite), newTracedEvent and addPending
// (device times of commands with events).

// contextTracing is a context's tracer and how it was configured: set by
// openTracing, in OpenConfig, never changed after.
type contextTracing struct {
	tr  *trace.Tracer // never nil; see "Tracing in rt" above
	own bool          // tr was made by the context, which closes it
	log *lineLogger   // what tr's summary and log without a path write to; nil for none
	on  bool          // tracing configured (Config.Trace or Config.Tracer)
	// deviceTimes: traced with device-time sampling, so queues profile.
	deviceTimes bool
}

// openTracing sets up the context's tracer and the trace handles of its
// devices, before any queue is created.
func (c *Context) openTracing(cfg Config) error {
	switch {
	case cfg.Tracer != nil:
		c.tracing.tr = cfg.Tracer
		c.tracing.on = true
	case cfg.Trace != "":
		c.tracing.log = &lineLogger{l: c.log()}
		// A file that another context or process writes is left out, with
		// one warning: the context opens without it.
		tr, err := trace.OpenWith(cfg.Trace, trace.OpenConfig{Stderr: c.tracing.log, Logger: c.log(), SkipBusy: true})
		if err != nil {
			return err
		}
		c.tracing.tr, c.tracing.own, c.tracing.on = tr, true, true
	default:
		c.tracing.tr, c.tracing.own = trace.New(), true
	}
	if c.tracing.on && c.tracing.tr.DeviceSampling() > 0 {
		c.settings.profiling, c.tracing.deviceTimes = true, true
	}
	for _, d := range c.devices {
		d.tr = c.tracing.tr.Device(d.index, d.String()) // "name (platform)": the platform names the backend
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
	return c.tracing.tr
}

// initQueueTrace gives a new queue its trace handle and, for the first
// profiling queue of a traced device, aligns the device clock to the host
// clock (see syncClock).
func (c *Context) initQueueTrace(q *Queue) error {
	d := q.dev
	q.tq = d.tr.Queue(q.id, "queue "+strconv.Itoa(q.id), true)
	if !c.tracing.deviceTimes || !q.profiling {
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
		h0 := q.ctx.tracing.tr.Now()
		ev, err := q.drv.Marker(nil)
		if err != nil {
			return fmt.Errorf("synchronise clock of %q: %w", d.Name, err)
		}
		err = ev.Wait()
		h1 := q.ctx.tracing.tr.Now()
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

// beginTask is the trace point of every enqueued command, of rt's tracer
// and of Go's execution tracer (gotrace.go): it returns the
// command's task (nil when tracing is off, after one atomic load) and emits
// its edges: the in-order edge and one per event of wait. skip is the
// number of rt frames between beginTask's caller and the user's code (see
// the comment at the top of this file). The caller releases the task when
// it is done with it, unless an Event keeps it (newTracedEvent).
func (q *Queue) beginTask(kind trace.CmdKind, name string, skip int, wait []*Event) *trace.Task {
	if kind != trace.Kernel && rtrace.IsEnabled() { // a launch logs its kernel (goTraceKernel)
		q.goTrace(kind, name, "", skip+1)
	}
	// Begin's skip 0 is beginTask; +1 is beginTask's caller, +skip the
	// core's entry point, +1 the facade's frame above it.
	tk := q.tq.Begin(kind, name, skip+3)
	if tk != nil {
		for _, w := range wait {
			if w != nil {
				tk.DependsOn(w.task)
			}
		}
	}
	return tk
}

// goTrace logs a command of kind named name, with detail after the name,
// to Go's execution tracer. skip counts the frames between goTrace's
// caller and the user's code, as beginTask's skip does.
func (q *Queue) goTrace(kind trace.CmdKind, name, detail string, skip int) {
	msg := kind.String() + " " + name + detail + " on " + strconv.Quote(q.dev.Name)
	if _, file, line, ok := runtime.Caller(skip + 3); ok { // goTrace, its caller, skip, the facade
		msg += " at " + file + ":" + strconv.Itoa(line)
	}
	rtrace.Log(context.Background(), goTraceCategory, msg)
}

// wantsEvent reports whether tk is a sampled task on a queue that reports
// device times (its context opened with device-time sampling, so that its
// clock is aligned), so that its command needs an event.
func (q *Queue) wantsEvent(tk *trace.Task) bool {
	return tk != nil && q.profiling && q.ctx.tracing.deviceTimes && tk.Sampled()
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

// addPending keeps a copy of tk with its command until its device times
// are known.
func (q *Queue) addPending(tk *trace.Task, ev *Event, drv driver.Event) {
	p := &q.pend
	p.mu.Lock()
	p.tasks = append(p.tasks, pendingTask{task: *tk, ev: ev, drv: drv})
	grow := len(p.tasks) >= max(p.next, pendingDrainAt)
	p.mu.Unlock()
	if grow {
		// Waiting for the newest command makes a profiling queue's times
		// all readable at once; a kernel-timed queue reads the times that
		// have come (waiting would have its backend fetch the rest early).
		q.drainTrace(!q.lateTimes)
	}
}

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
	if !c.tracing.tr.Enabled() {
		return 0
	}
	return c.tracing.tr.Now()
}
