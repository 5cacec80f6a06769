package rt

import (
	"fmt"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Queue is an in-order command queue on one device. It is safe for
// concurrent use: commands from several goroutines are ordered as they
// reach it.
type Queue struct {
	ctx       *Context
	dev       *Device
	drv       driver.Queue
	profiling bool

	id   int          // the queue's number in its context, from 0
	tq   *trace.Queue // trace handle; see tracing.go
	pend pendingList  // traced commands awaiting their device times
	pts  queuePoints  // use points, for stream-ordered reuse (use.go)
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

// Profiling reports whether the queue records device timestamps.
func (q *Queue) Profiling() bool { return q != nil && q.profiling }

// Flush submits every enqueued command to the device.
func (q *Queue) Flush() error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	if err := q.drv.Flush(); err != nil {
		return fmt.Errorf("flush queue on %q: %w", q.dev.Name, err)
	}
	return nil
}

// Finish blocks until every enqueued command has completed.
func (q *Queue) Finish() error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	n := q.pts.enq.Load()
	if err := q.drv.Finish(); err != nil {
		return fmt.Errorf("finish queue on %q: %w", q.dev.Name, err)
	}
	q.pts.complete(n)
	q.drainTrace()
	return nil
}

// Marker enqueues a command that completes when every event of wait has
// completed, or, with no events, when everything enqueued before it has.
func (q *Queue) Marker(wait ...*Event) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("enqueue marker: %w", err)
	}
	tk := q.beginTask(trace.Marker, "marker", 0, wait)
	ev, err := q.drv.Marker(dw)
	tk.End()
	if err != nil {
		return nil, fmt.Errorf("enqueue marker on %q: %w", q.dev.Name, err)
	}
	return q.newTracedEvent(ev, "marker", tk), nil
}

// Launch enqueues kernel k over r after the events of wait. k's arguments
// must have been set; Launch captures them, so k may be changed once
// Launch returns.
func (q *Queue) Launch(k *Kernel, r Range, wait ...*Event) (*Event, error) {
	return q.launch(k, r, wait, 0)
}

// launch is Launch; skip is as for beginTask.
func (q *Queue) launch(k *Kernel, r Range, wait []*Event, skip int) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	if k == nil {
		return nil, nilKernel("launch")
	}
	if err := q.ctx.sameContext("the kernel", k.prog.ctx); err != nil {
		return nil, fmt.Errorf("launch kernel %q: %w", k.name, err)
	}
	if err := k.checkRange(q, r); err != nil {
		return nil, fmt.Errorf("launch kernel %q: %w", k.name, err)
	}
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("launch kernel %q: %w", k.name, err)
	}
	tk := q.beginTask(trace.Kernel, k.name, skip+1, wait)
	ev, err := q.drv.EnqueueKernel(k.drv, r.ndrange(), dw)
	tk.End()
	if err != nil {
		return nil, fmt.Errorf("launch kernel %q over %v on %q: %w", k.name, r, q.dev.Name, err)
	}
	q.recordArgs(k)
	return q.newTracedEvent(ev, k.name, tk), nil
}

// Submit enqueues kernel k over r after the events of wait, like Launch,
// but creates no event: use it where the queue's order is all that is
// needed, since on some drivers an event costs as much as the launch.
func (q *Queue) Submit(k *Kernel, r Range, wait ...*Event) error {
	return q.submit(k, r, wait, 0)
}

// submit is Submit; skip is as for beginTask. When tracing reports device
// times it creates an event after all, kept in the pending list.
func (q *Queue) submit(k *Kernel, r Range, wait []*Event, skip int) error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	if k == nil {
		return nilKernel("submit")
	}
	if err := q.ctx.sameContext("the kernel", k.prog.ctx); err != nil {
		return fmt.Errorf("submit kernel %q: %w", k.name, err)
	}
	if err := k.checkRange(q, r); err != nil {
		return fmt.Errorf("submit kernel %q: %w", k.name, err)
	}
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("submit kernel %q: %w", k.name, err)
	}
	tk := q.beginTask(trace.Kernel, k.name, skip+1, wait)
	if q.wantsEvent(&tk) {
		ev, err := q.drv.EnqueueKernel(k.drv, r.ndrange(), dw)
		tk.End()
		if err != nil {
			return fmt.Errorf("submit kernel %q over %v on %q: %w", k.name, r, q.dev.Name, err)
		}
		q.recordArgs(k)
		q.addPending(tk, nil, ev)
		return nil
	}
	err = q.drv.SubmitKernel(k.drv, r.ndrange(), dw)
	tk.End()
	if err != nil {
		return fmt.Errorf("submit kernel %q over %v on %q: %w", k.name, r, q.dev.Name, err)
	}
	q.recordArgs(k)
	return nil
}

// driverEvents returns the driver events of wait, skipping nil events, and
// nil (no allocation) when there are none. A released event is an error:
// its backend event is gone; so is an event of another context.
func (q *Queue) driverEvents(wait []*Event) ([]driver.Event, error) {
	if len(wait) == 0 {
		return nil, nil
	}
	dst := make([]driver.Event, 0, len(wait))
	for _, e := range wait {
		if e == nil {
			continue
		}
		e.mu.Lock()
		released := e.released
		e.mu.Unlock()
		if released {
			return nil, fmt.Errorf("wait list: event of %s: %w", e.name, ErrReleased)
		}
		if err := q.ctx.sameContext("the event of "+e.name, e.q.ctx); err != nil {
			return nil, fmt.Errorf("wait list: %w", err)
		}
		dst = append(dst, e.drv)
	}
	return dst, nil
}
