package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/trace"
)

// Queues: their creation, ordering, markers and wait lists. What runs on
// them lives beside this file: kernels and their launch records
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
	//   - ctx, gate, dev, tq, launcher, drv, profiling, lateTimes, timer, id
	//     and tune are set when the queue is made and never change: by
	//     NewQueue, or for the queues that Record and Graph.Update
	//     (recordingQueue) and SpecConst.Tune (tuningQueue) hand their
	//     functions, from the queue they are made from, whose driver queue,
	//     gate, trace handle and id they share.
	//   - Every call on the queue that uses a driver object runs between
	//     q.enter and q.exit, which count it in gate, so that Close waits for
	//     it (context.go). A queue counts its own calls, so that goroutines
	//     launching on queues of their own share no written cache line; a
	//     recording or tuning queue counts in the gate of the queue it was
	//     made from. A call of the context as a whole counts in the context's
	//     guard instead.
	//   - rec, specs, global and bind are atomics; pts and log are atomic
	//     counters (and log's ring and pcs atomic words); pooled, holders and
	//     busy are the context's pool's, under its mutex (queuepool.go).
	//   - pend has its own mutex, which only tracing takes; drainTrace holds
	//     it across the driver calls that read device times. No other lock of
	//     the queue is held across a driver call.
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

	id   int         // the queue's number in its context, from 0
	pend pendingList // traced commands awaiting their device times
	pts  queuePoints // use points, for stream-ordered reuse

	// pooled marks a queue of the context's pool (queuepool.go), which
	// holders goroutines hold; both are guarded by the pool's mutex.
	pooled  bool
	holders int
	// busy, on an idle queue of the pool, marks the work that its last
	// request bound to a context may have left on it (queuebind.go), or
	// is nil; AcquireQueue prefers queues whose busy has completed.
	busy *Event

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

	// bind is the context of the request that holds the queue, from
	// Context.AcquireQueueContext to ReleaseQueue (queuebind.go), or nil.
	// It comes last, so that the fields a launch reads first keep their
	// cache lines.
	bind atomic.Pointer[queueBind]
}

// tuneOverride is what a tuning queue gives its launches: the candidate
// lit of the constant d, and whether a launch of a kernel whose program
// uses d has met it (used).
type tuneOverride struct {
	d    *desc.SpecConst
	lit  string
	used atomic.Bool
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
