package cuda

/*
#cgo noescape dgen_event_query
#cgo nocallback dgen_event_query
#cgo noescape dgen_times
#cgo nocallback dgen_times
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
)

// cuEvent is a CUDA event of a device, counted: an event object and the
// device's clock anchor may hold it; at zero it goes back to its pool.
type cuEvent struct {
	h    C.CUevent
	pool *eventPool
	refs atomic.Int32
}

func (e *cuEvent) unref() {
	if e != nil && e.refs.Add(-1) == 0 {
		e.pool.put(e)
	}
}

// eventPool keeps a device's released events for reuse: creating one costs
// about as much as recording it.
type eventPool struct {
	d     *device
	timed bool
	mu    sync.Mutex
	free  []*cuEvent
}

// get returns an event with one reference.
func (p *eventPool) get() (*cuEvent, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		e := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		e.refs.Store(1)
		return e, nil
	}
	p.mu.Unlock()
	e := &cuEvent{pool: p}
	timed := C.int(0)
	if p.timed {
		timed = 1
	}
	if err := cuError("cuEventCreate", C.dgen_event_create(p.d.ctx, &e.h, timed)); err != nil {
		return nil, err
	}
	e.refs.Store(1)
	return e, nil
}

// poolMax bounds the events a pool keeps.
const poolMax = 1024

func (p *eventPool) put(e *cuEvent) {
	p.mu.Lock()
	if len(p.free) < poolMax {
		p.free = append(p.free, e)
		e = nil
	}
	p.mu.Unlock()
	if e != nil {
		C.dgen_event_destroy(p.d.ctx, e.h)
	}
}

// drain destroys the pool's events.
func (p *eventPool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.free {
		C.dgen_event_destroy(p.d.ctx, e.h)
	}
	p.free = nil
}

// anchor relates a device's events to its clock: CUDA gives only the time
// between two events, as a float32 of milliseconds, so a command's time is
// the anchor's plus the time from the anchor's event. Float32 loses
// precision as that time grows, so a command more than reanchorAfter from
// the anchor becomes the new anchor.
type anchor struct {
	mu sync.Mutex
	ev *cuEvent
	ns int64
}

// reanchorAfter is how far from its anchor a time is read before the
// anchor moves: float32 milliseconds keep 0.1 µs up to there.
const reanchorAfter = 1000 // ms

// init records the device's first anchor and waits for it.
func (a *anchor) init(d *device) error {
	e, err := d.timed.get()
	if err != nil {
		return err
	}
	var step C.int
	if r := C.dgen_marker(d.ctx, 0, 0, nil, e.h, &step); r != 0 {
		e.unref()
		return stepError("cuEventRecord", step, r)
	}
	if err := cuError("cuEventSynchronize", C.dgen_event_sync(d.ctx, e.h)); err != nil {
		e.unref()
		return err
	}
	a.ev, a.ns = e, int64(time.Since(processStart))
	return nil
}

// times waits for end and returns the device times of start (nil: the
// same as end's) and end, in nanoseconds: one call into the driver. The
// anchor's lock is not held while it waits.
func (a *anchor) times(start, end *cuEvent) (s, e int64, err error) {
	a.mu.Lock()
	from, ns := a.ev, a.ns
	if from == nil {
		a.mu.Unlock()
		return 0, 0, errors.New("cuEventElapsedTime: the context is released")
	}
	from.refs.Add(1) // kept while the driver reads it, if the anchor moves
	a.mu.Unlock()
	defer from.unref()
	var ms [2]C.float
	var step C.int
	if r := C.dgen_times(end.pool.d.ctx, from.h, handle(start), end.h, &ms[0], &step); r != 0 {
		return 0, 0, stepError("cuEventElapsedTime", step, r)
	}
	e = ns + int64(float64(ms[1])*1e6)
	s = e
	if start != nil {
		s = ns + int64(float64(ms[0])*1e6)
	}
	if ms[1] > reanchorAfter {
		a.mu.Lock()
		if a.ev == from {
			end.refs.Add(1)
			a.ev.unref()
			a.ev, a.ns = end, e
		}
		a.mu.Unlock()
	}
	return s, e, nil
}

func (a *anchor) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ev.unref()
	a.ev = nil
}

// plainEvent is the driver.Event of a command on a queue that does not
// profile: the event recorded after it. A struct of one pointer, it makes
// no allocation when it becomes a driver.Event.
type plainEvent struct{ e *cuEvent }

func (p plainEvent) last() *cuEvent { return p.e }

// Wait blocks until the command has completed.
func (p plainEvent) Wait() error { return waitFor(p.e) }

// Status returns StatusComplete or StatusSubmitted.
func (p plainEvent) Status() (driver.EventStatus, error) { return statusOf(p.e) }

// Profile fails: the queue does not profile.
func (p plainEvent) Profile() (driver.Timing, error) {
	return driver.Timing{}, &driver.Error{Call: "cuEventElapsedTime", Code: 6, Name: "CUDA_ERROR_INVALID_HANDLE (the queue does not profile)"}
}

// Release gives the CUDA event back; a command still running keeps its
// own record of it.
func (p plainEvent) Release() error {
	p.e.unref()
	return nil
}

func waitFor(e *cuEvent) error {
	return cuError("cuEventSynchronize", C.dgen_event_sync(e.pool.d.ctx, e.h))
}

// statusOf returns StatusComplete or StatusSubmitted: CUDA does not tell a
// running command from a waiting one.
func statusOf(e *cuEvent) (driver.EventStatus, error) {
	switch r := C.dgen_event_query(e.pool.d.ctx, e.h); r {
	case 0:
		return driver.StatusComplete, nil
	case C.DGEN_CUDA_ERROR_NOT_READY:
		return driver.StatusSubmitted, nil
	default:
		return 0, cuError("cuEventQuery", r)
	}
}

// event is the driver.Event of a command on a profiling queue: the timed
// events recorded before it (nil for a marker, whose start is its end) and
// after it.
type event struct {
	d          *device
	start, end *cuEvent
	released   atomic.Bool
	kt         *kernelTimes // the queue's kernel times, or nil
	seq        uint64       // kt.launched when the command was enqueued
}

func (e *event) last() *cuEvent { return e.end }

// Wait blocks until the command has completed; on a kernel-timed queue it
// then has CUPTI hand over the records of the kernels before it.
func (e *event) Wait() error {
	if err := waitFor(e.end); err != nil {
		return err
	}
	if e.kt != nil {
		e.kt.settle(e.seq)
	}
	return nil
}

// Status returns StatusComplete or StatusSubmitted.
func (e *event) Status() (driver.EventStatus, error) { return statusOf(e.end) }

// Profile returns the command's device times: Queued and Submitted are its
// start, which CUDA does not tell apart.
func (e *event) Profile() (driver.Timing, error) {
	start, end, err := e.d.anchor.times(e.start, e.end)
	if err != nil {
		return driver.Timing{}, err
	}
	if start < 0 || end < start {
		return driver.Timing{}, fmt.Errorf("cuEventElapsedTime: times %d and %d out of order", start, end)
	}
	return driver.Timing{Queued: uint64(start), Submitted: uint64(start), Started: uint64(start), Ended: uint64(end)}, nil
}

// Release gives the event's CUDA events back.
func (e *event) Release() error {
	if e.released.Swap(true) {
		return nil
	}
	e.start.unref()
	e.end.unref()
	return nil
}
