package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/trace"
)

// Queues: their creation and release, ordering, markers and wait lists.
// What runs on them lives beside this file: kernels and their launch records
// (kernel.go), the launch path (launch.go), ranges (range.go), events
// (event.go), programs (program.go), work-group limits (workgroup.go), use
// points of stream-ordered reuse (streamorder.go), the trace point of every
// command (tracing.go), command graphs (graph.go, recording.go), and the
// context's pool of queues (queuepool.go).

// Queue is an in-order command queue on one device. It is safe for
// concurrent use: commands from several goroutines are ordered as they
// reach it. Goroutines that launch concurrently scale best with a queue
// each, as CUDA threads do with a stream each: a generated Enqueue then
// shares no kernel object and takes no lock. A goroutine that lives for
// one request (a server's handler) takes a queue of the context's pool
// for the request instead (Context.AcquireQueue).
type Queue struct {
	// Invariants:
	//   - ctx, gate, dev, tq, launcher, drv, profiling, lateTimes, timer, id,
	//     prio, asked and tune are set when the queue is made and never
	//     change: by
	//     NewQueue, or for the queues that Record and Graph.Update
	//     (recordingQueue) and SpecConst.Tune (tuningQueue) hand their
	//     functions, and for the views of WithSpec (with spec and base), from
	//     the queue they are made from, whose driver queue, gate, trace handle
	//     and id they share.
	//   - Every call on the queue that uses a driver object runs between
	//     q.enter and q.exit, which count it in gate, so that Close waits for
	//     it (context.go). A queue counts its own calls, so that goroutines
	//     launching on queues of their own share no written cache line; a
	//     recording or tuning queue counts in the gate of the queue it was
	//     made from. A call of the context as a whole counts in the context's
	//     guard instead.
	//   - rec, specs, global and bind are atomics; pts and log are atomic
	//     counters (and log's ring and pcs atomic words); pooled, busy, and
	//     the holders of gate, are the context's pool's, written under its
	//     mutex (queuepool.go).
	//   - pend has its own mutex, which only tracing takes; drainTrace holds
	//     it across the driver calls that read device times. No other lock of
	//     the queue is held across a driver call.
	//   - A queue that NewQueue made is released once, by Release or Close:
	//     Release marks the gate released (enter fails from then on), waits
	//     for the calls inside and for the queue's commands, and takes the
	//     queue out of the context's queues; the driver queue goes with the
	//     last holder of gate.refs.
	//
	// The fields that a launch reads come first, so that they share few cache
	// lines: between two launches the driver's own work evicts them.
	ctx      *Context
	gate     *queueGate // the calls inside enter, which Close waits for (context.go)
	dev      *Device
	rec      queueRec           // the graph the queue records into (recording.go)
	tq       *trace.Queue       // trace handle; see "Tracing in rt" (tracing.go)
	launcher driver.ArgLauncher // drv, where it sets arguments and launches in one call
	drv      driver.Queue
	// specs parks the queue's kernel instances between launches, by a
	// hash of the spec (instance.go's specSlot): a loop launches the same few
	// specs again and again, each from an instance of its own.
	specs [8]atomic.Pointer[specHit]

	profiling bool
	lateTimes bool                    // drv is kernel-timed (driver.KernelTimer): its kernels' times may come after them
	timer     driver.KernelTimedQueue // drv, where it is kernel-timed and can time a kernel without its event
	// bind is the context of the request that holds the queue, from
	// Context.AcquireQueueContext to ReleaseQueue (queuebind.go), or nil;
	// a view's is nil, and base's binds it (Queue.binding). base is set on
	// the views that WithSpec returns, the queue they are views of. Every
	// launch reads both, so they share the line of specs and timer.
	base *Queue
	bind atomic.Pointer[queueBind]

	id   int         // the queue's number in its context, from 0
	pend pendingList // traced commands awaiting their device times
	pts  queuePoints // use points, for stream-ordered reuse

	// pooled marks a queue of the context's pool (queuepool.go), guarded
	// by the pool's mutex; gate.holders goroutines hold it.
	pooled bool
	// busy, on an idle queue of the pool, marks the work that its last
	// request bound to a context may have left on it (queuebind.go), or
	// is nil; AcquireQueue prefers queues whose busy has completed.
	busy *Event

	// prio is the priority the queue runs at, asked the one it was made
	// at, which keys the pool (priority.go).
	prio, asked Priority

	// global is the device global storage that globalMem found last on
	// this queue's device: a host loop reads and writes one global again
	// and again.
	global atomic.Pointer[globalHit]

	// log records the launches since the queue's last completed
	// synchronisation, which a device fault names (fault.go).
	log launchLog

	// tune is set on the queues that SpecConst.Tune hands its function,
	// one per candidate (speclaunch.go's tuningQueue): their launches run
	// with the candidate. Nil on every other queue.
	tune *tuneOverride

	// spec is set on the views that WithSpec returns (queuespec.go),
	// with base (above), the queue they are views of; views holds a
	// queue's views. Nil on every other queue.
	spec  *queueSpec
	views queueViews
}

// tuneOverride is what a tuning queue gives its launches: the candidate
// lit of the constant d, and whether a launch of a kernel whose program
// uses d has met it (used).
type tuneOverride struct {
	d    *desc.SpecConst
	lit  string
	used atomic.Bool
}

// newDriverQueue creates the driver queue of a new Queue on device dev,
// at priority prio (priority.go): kernel-timed (driver.KernelTimer, timed
// true) when tracing reports the device times of every command and the
// backend has a cheaper way than events. A queue at another priority than
// PriorityNormal is never kernel-timed: its device times come from its
// events.
func (c *Context) newDriverQueue(dev int, prio Priority) (q driver.Queue, timed bool, err error) {
	if prio != PriorityNormal {
		o := driver.QueueOptions{Profiling: c.settings.profiling, Priority: driver.Priority(prio)}
		q, err = c.drv.(driver.PriorityContext).NewQueueOptions(dev, o) // queuePriority returns PriorityNormal for other backends
		return q, false, err
	}
	if kt, ok := c.drv.(driver.KernelTimer); ok && c.tracing.deviceTimes && c.tracing.tr.DeviceSampling() == 1 {
		q, err = kt.NewKernelTimedQueue(dev)
		if !errors.Is(err, errors.ErrUnsupported) {
			return q, err == nil, err
		}
	}
	q, err = c.drv.NewQueue(dev, c.settings.profiling)
	return q, false, err
}

// NewQueue creates an in-order queue on dev, which must be one of the
// context's devices, for a goroutine that launches on a queue of its own.
// Give it back with Queue.Release once done with it: a worker that lives
// shorter than the context (one per job of a pool that grows and shrinks)
// releases its queue when it ends, and the process keeps nothing of it.
// The context releases on Close the queues that Release did not.
//
//	q, err := ctx.NewQueue(dev)
//	if err != nil {
//		return err
//	}
//	defer q.Release()
//	// launch on q
//
// A goroutine that lives for one request of a server takes a queue of
// the context's pool instead (AcquireQueue, on the first device), which
// makes no driver queue per request. NewQueue never waits for the
// commands of the context's other queues. Once Shutdown has begun it fails
// with an error wrapping ErrShuttingDown.
func (c *Context) NewQueue(dev *Device) (*Queue, error) { return c.NewQueueConfig(dev, QueueConfig{}) }

// NewQueueConfig is NewQueue for a queue made with cfg: at a priority
// (QueueConfig.Priority), where the device has one. A priority that is
// not one of Priority's constants is an error wrapping ErrInvalidArgument.
func (c *Context) NewQueueConfig(dev *Device, cfg QueueConfig) (*Queue, error) {
	if c != nil && c.draining.Load() {
		return nil, fmt.Errorf("create queue: %w", c.enterError())
	}
	return c.newQueue(dev, cfg)
}

// newQueue is NewQueueConfig for the pool too, whose AcquireQueueConfig
// checks draining itself.
func (c *Context) newQueue(dev *Device, cfg QueueConfig) (*Queue, error) {
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("create queue: %w", err)
	}
	defer c.exit()
	if dev == nil || dev.index >= len(c.devices) || c.devices[dev.index] != dev {
		return nil, fmt.Errorf("create queue: %w: the device is not one of this context's (%s)", ErrInvalidArgument, c.deviceLabel())
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("create queue: %w", err)
	}
	prio := c.queuePriority(dev, cfg.Priority)
	dq, late, err := c.newDriverQueue(dev.index, prio)
	if err != nil {
		return nil, c.failed(nil, fmt.Errorf("create queue on %q: %w", dev.Name, err))
	}
	q := &Queue{ctx: c, gate: new(queueGate), dev: dev, drv: dq, profiling: c.settings.profiling, lateTimes: late, id: int(c.queues.ids.Add(1) - 1),
		prio: prio, asked: cfg.Priority}
	q.gate.refs.Store(1)
	q.launcher, _ = dq.(driver.ArgLauncher)
	if late {
		q.timer, _ = dq.(driver.KernelTimedQueue)
	}
	if err := c.initQueueTrace(q); err != nil {
		dq.Release()
		return nil, err
	}
	if c.queues.len() > 0 {
		var u alloc.Use
		c.queues.once.Do(func() { u = c.startMultiQueue() })
		if u.Queue != nil {
			c.completeAsync(c.queue, u.Point)
		}
	}
	c.queues.add(q)
	return q, nil
}

// queueSet is the set of a context's queues that Close releases: the
// default queue, the pool's, and those NewQueue made and Release did not
// release. Queues are added once made, and taken away by Release or, all
// at once, by Close.
type queueSet struct {
	// multi is set once, when the context's second queue is made: from
	// then on commands record their uses of allocator memory
	// (streamorder.go). Launches read it.
	multi atomic.Bool
	once  sync.Once    // runs startMultiQueue when the second queue is made
	ids   atomic.Int32 // queue ids, from 0

	mu   sync.Mutex // protects list; held for no other call
	list []*Queue
}

// add adds q to the set.
func (s *queueSet) add(q *Queue) {
	s.mu.Lock()
	s.list = append(s.list, q)
	s.mu.Unlock()
}

// remove takes q out of the set, if it is there.
func (s *queueSet) remove(q *Queue) {
	s.mu.Lock()
	if i := slices.Index(s.list, q); i >= 0 {
		s.list = slices.Delete(s.list, i, i+1)
	}
	s.mu.Unlock()
}

// contains reports whether q is in the set.
func (s *queueSet) contains(q *Queue) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.list, q)
}

// len returns the number of queues in the set.
func (s *queueSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}

// snapshot returns a copy of the set's queues.
func (s *queueSet) snapshot() []*Queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

// takeAll empties the set and returns what it held (Close).
func (s *queueSet) takeAll() []*Queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	qs := s.list
	s.list = nil
	return qs
}

// startMultiQueue makes the context record its commands' uses of
// allocator memory (streamorder.go), when its second queue is made, and
// returns the barrier it set. The uses of the first queue until then went
// unrecorded: rather than finish that queue (which would wait for
// whatever it runs, a kernel that never ends included, and did so under
// the context's mutex once), it takes a point on the first queue that covers
// every one of them, and makes it a last use of every block of the
// allocators (alloc.Allocator.Barrier): a reuse on another queue is
// ordered after it, without blocking, until the point is known complete
// (completeAsync). A command records its uses if it reads queues.multi set
// after it was enqueued; one that reads it unset was enqueued before this
// Store, hence before the point. An allocator made after the Store serves
// commands that record their uses. NewQueue hands out the new queue only
// after the barriers are set: it calls this through c.multi, whose other
// callers wait for it (it makes no driver call).
func (c *Context) startMultiQueue() alloc.Use {
	c.queues.multi.Store(true)
	q0 := c.queue
	u := alloc.Use{Queue: q0, Point: q0.pts.point()}
	for i := range c.allocs.slots {
		if d := c.allocs.slots[i].Load(); d != nil {
			d.a.Barrier(u)
		}
	}
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	for _, a := range c.images.pools {
		a.Barrier(u)
	}
	return u
}

// completeAsync marks q's points up to p complete once a marker enqueued
// now has completed, waiting in a goroutine that Close waits for (it is
// inside q's enter), so that a barrier on q stops ordering reuses even on
// a queue that is never finished.
func (c *Context) completeAsync(q *Queue, p uint64) {
	if q.enter() != nil {
		return
	}
	ev, err := q.drv.Marker(nil)
	if err == nil {
		err = q.drv.Flush()
		if err != nil {
			ev.Release()
		}
	}
	if err != nil {
		q.exit()
		c.failed(q, err) // a fault is the context's; anything else leaves the barrier to the queue's next Finish
		return
	}
	go func() {
		defer q.exit()
		if err := ev.Wait(); err != nil {
			c.failed(q, fmt.Errorf("wait for queue %d on %q: %w", q.id, q.dev.Name, err))
		} else {
			q.pts.complete(p)
		}
		ev.Release()
	}()
}

// Release gives back a queue that NewQueue made, once the commands
// enqueued on it have completed: it waits for the calls in progress on the
// queue and for its commands (as Finish does), then drops the queue from
// the context and from what the context keeps per queue (the kernel
// instances parked on it, which go back to their kernels' pools, the
// allocators' records of its uses, its launch log, its trace handle and
// pending device times, the graphs prepared for it) and releases its
// driver queue (after the last pinned memory mapped through it is freed,
// if any is still live). Events of its commands stay valid. Every later
// use of the queue is an error wrapping ErrClosed; a second Release does
// nothing, nor does a Release after the context's Close (or its device
// fault), since Close releases the queue. The default queue (Close
// releases it), a queue of the pool (ReleaseQueue gives it back) and a
// queue that Record or SpecConst.Tune hands its function are not
// NewQueue's: releasing one is an error wrapping ErrInvalidArgument. A
// graph recorded on the queue launches on other queues as before, but its
// Update needs the queue it was recorded on, and fails with ErrClosed
// after its Release. Release holds no lock while it waits or releases.
func (q *Queue) Release() error {
	if q == nil {
		return fmt.Errorf("release queue: %w: nil queue", ErrInvalidArgument)
	}
	c := q.ctx
	if c.enter() != nil {
		return nil // Close releases it
	}
	defer c.exit()
	if q.gate.released.Load() != nil {
		return nil
	}
	if err := c.releasable(q); err != nil {
		return err
	}
	r := &queueRelease{done: make(chan struct{})}
	if !q.gate.released.CompareAndSwap(nil, r) {
		return nil // another goroutine's Release
	}
	c.waitIdle(&q.gate.n) // the calls on q in progress; later ones fail
	l := q.log.mark()
	err := q.drv.Finish()
	if err == nil {
		q.pts.done.Store(math.MaxUint64) // every use on q, recorded or to come, is complete
		q.log.synchronised(l)
	}
	q.drainTrace(err == nil)
	close(r.done)
	if err != nil {
		// Close releases it, with the context's other queues.
		return c.failed(q, fmt.Errorf("release queue %d on %q: finish: %w", q.id, q.dev.Name, err))
	}
	c.queues.remove(q)
	q.dropCaches()
	return q.unref()
}

// releasable checks that q is a queue that Release may release: one that
// NewQueue made and handed out, not the default queue or the pool's.
func (c *Context) releasable(q *Queue) error {
	what := ""
	switch {
	case q == c.queue:
		what = "the context's default queue (Close releases it)"
	case q.rec.Load() != nil || q.tune != nil:
		what = "a queue that Record or Tune hands its function"
	default:
		c.pool.mu.Lock()
		pooled := q.pooled
		c.pool.mu.Unlock()
		if pooled {
			what = "a queue of the context's pool (give it back with ReleaseQueue)"
		}
	}
	if what == "" {
		if !c.queues.contains(q) {
			what = "not a queue that NewQueue made"
		}
	}
	if what != "" {
		return fmt.Errorf("release queue %d on %q: %w: %s", q.id, q.dev.Name, ErrInvalidArgument, what)
	}
	return nil
}

// dropCaches drops what the context keeps for q, which Release has
// finished: the kernel instances parked in its slots and in its views'
// (WithSpec, which share its gate: no launch on one parks any more) go
// back to their prototypes' pools (or are released, if their prototype
// was evicted), the device global it found last, the graphs prepared for
// it, and its trace handle. The records of its uses in blocks and buffers
// are complete (its points are), and go at the next free or use of each.
func (q *Queue) dropCaches() {
	for _, v := range append(q.viewsOf(), q) {
		for i := range v.specs {
			if h := v.specs[i].Swap(nil); h != nil {
				h.q = nil
				h.unpark()
			}
		}
	}
	q.global.Store(nil)
	q.ctx.graphs.dropQueue(q) // graph.go
	q.dev.tr.DropQueue(q.tq)
}

// Context returns the queue's context.
func (q *Queue) Context() *Context {
	if q == nil {
		return nil
	}
	return q.ctx
}

// Device returns the queue's device.
func (q *Queue) Device() *Device {
	if q == nil {
		return nil
	}
	return q.dev
}

// profilingOn reports whether the queue records device timestamps.
func (q *Queue) profilingOn() bool { return q != nil && q.profiling }

// Flush submits every enqueued command to the device.
func (q *Queue) Flush() error {
	if err := q.enter(); err != nil {
		return fmt.Errorf("flush queue: %w", err)
	}
	defer q.exit()
	if err := q.drv.Flush(); err != nil {
		return q.ctx.failed(q, fmt.Errorf("flush queue on %q: %w", q.dev.Name, err))
	}
	return nil
}

// Finish blocks until every enqueued command has completed.
func (q *Queue) Finish() error {
	if err := q.enter(); err != nil {
		return fmt.Errorf("finish queue: %w", err)
	}
	defer q.exit()
	return q.finish()
}

// FinishContext is Finish bounded by ctx: when ctx is done before every
// enqueued command has completed, it returns an error wrapping ctx.Err(),
// and the commands run on. The driver's wait, which cannot be stopped,
// goes on in a goroutine until they have completed (Context.Close waits
// for it).
func (q *Queue) FinishContext(ctx context.Context) error {
	if ctx.Done() == nil {
		return q.Finish()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("finish queue: %w", err)
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("finish queue: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		defer q.exit()
		done <- q.finish()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("finish queue on %q: %w", q.dev.Name, ctx.Err())
	}
}

// finish is Finish inside q's enter.
func (q *Queue) finish() error {
	n, l := q.pts.enq.Load(), q.log.mark()
	if err := q.drv.Finish(); err != nil {
		return q.ctx.failed(q, fmt.Errorf("finish queue on %q: %w", q.dev.Name, err))
	}
	q.pts.complete(n)
	q.log.synchronised(l)
	q.drainTrace(true)
	return nil
}

// Marker enqueues a command that completes when every event of wait has
// completed, or, with no events, when everything enqueued before it has.
func (q *Queue) Marker(wait ...*Event) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("enqueue marker: %w", err)
	}
	defer q.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("enqueue marker: %w", err)
	}
	if r := q.rec.Load(); r != nil {
		return nil, r.refuse("enqueue marker", "a marker's event would complete before the graph runs")
	}
	tk := q.beginTask(trace.Marker, "marker", 0, wait)
	ev, err := q.drv.Marker(dw)
	tk.End()
	if err != nil {
		return nil, q.ctx.failed(q, fmt.Errorf("enqueue marker on %q: %w", q.dev.Name, err))
	}
	return q.newTracedEvent(ev, "marker", tk), nil
}

// waitBefore is the wait of a blocking call's Context form (ReadContext,
// WriteContext, ...), bounded by ctx: it waits for what the blocking
// command would wait for before it runs, the commands enqueued on q before
// it and the events of wait, through a marker. When ctx is done first it
// returns an error wrapping ctx.Err() for op, and the commands run on (the
// marker's wait goes on in a goroutine of its Event, as WaitContext's).
// The blocking command that follows then waits for its own copy, and for
// what other goroutines enqueued on q meanwhile. A ctx that is never done,
// and a recording queue (which refuses the blocking command itself), wait
// for nothing here; the plain forms, whose ctx is nil, do not call it.
func (q *Queue) waitBefore(ctx context.Context, op string, wait []*Event) error {
	if ctx.Done() == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if q.rec.Load() != nil {
		q.exit()
		return nil
	}
	dw, err := q.driverEvents(wait)
	var ev driver.Event
	if err == nil {
		ev, err = q.drv.Marker(dw)
	}
	if err != nil {
		q.exit()
		return fmt.Errorf("%s: wait for the commands before it on %q: %w", op, q.dev.Name, err)
	}
	// Made inside enter, so that Close, which waits for it, finds the
	// event in the live set and releases it; the wait is outside, so that
	// it does not hold Close off.
	e := newEvent(q, ev, "the commands before "+op)
	q.exit()
	defer e.Release()
	if err := e.WaitContext(ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}
