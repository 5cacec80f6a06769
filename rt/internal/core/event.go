package core

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Events and wait lists: the Event of a command (its waits, times and
// release) and the wait lists that commands take (WaitList, Waits,
// driverEvents).

// Event is the completion status of one enqueued command. Pass it in a wait
// list to order commands, or Wait for it. The backend event is released
// when the Event becomes unreachable, or earlier by Release.
type Event struct {
	// eventState's mu guards the fields below it there; a driver wait
	// runs outside it (wait).
	*eventState
	q       *Queue
	name    string
	task    *trace.Task // the command's trace task, never released; nil when untraced
	cleanup runtime.Cleanup
}

// eventState is the driver event of an Event and what guards it: the part
// of the Event that its context's live set holds (live.go), so that Close
// can release the driver event of an Event that is still reachable,
// without keeping the Event itself reachable (its cleanup releases it once
// it is not). It never points to its Event.
type eventState struct {
	mu       sync.Mutex
	drv      driver.Event
	released bool
	pending  bool // in its queue's trace list: the list releases drv
	waiting  int  // goroutines in drv.Wait, outside mu: the last one out releases drv if the Event was released meanwhile
	dropped  bool // drv released
	bg       *backgroundWait

	ctx        *Context
	prev, next *eventState // the context's live events (liveSet), guarded by its mu
	listed     bool        // in that list
}

// backgroundWait is the one driver wait that WaitContext leaves to a
// goroutine of its own: its err is set when done is closed.
type backgroundWait struct {
	done chan struct{}
	err  error
}

// newEvent wraps drv, the event of a command enqueued on q inside q's
// enter. The Event is live in the context (live.go) until it is
// released: by Release, by its cleanup once it is unreachable, or by
// Close.
func newEvent(q *Queue, drv driver.Event, name string) *Event {
	s := &eventState{drv: drv, ctx: q.ctx}
	e := &Event{eventState: s, q: q, name: name}
	e.cleanup = runtime.AddCleanup(e, forgetEvent, s)
	q.ctx.live.addEvent(s)
	return e
}

// forgetEvent is the cleanup of an Event that became unreachable
// (newEvent): it releases the driver event unless Close has it. Nothing
// else holds an unreachable Event's driver event: a goroutine that waits
// on it holds the Event.
func forgetEvent(e *eventState) {
	c := e.ctx
	if c.enter() != nil {
		return // Close releases it
	}
	defer c.exit()
	if c.live.removeEvent(e) {
		e.drv.Release() // nobody waits for a cleanup's error
	}
}

// releasedError is the error of op on an Event that was released: by its
// owner (ErrReleased), or by its context's Close (ErrClosed).
func (e *Event) releasedError(op string) error {
	if e.q.ctx.closed.Load() {
		return fmt.Errorf("%s %s: %w", op, e.name, e.q.ctx.closedError())
	}
	return fmt.Errorf("%s %s: %w", op, e.name, ErrReleased)
}

// nilEvent is the error of an operation on a nil *Event.
func nilEvent(op string) error { return fmt.Errorf("%s: %w: nil event", op, ErrInvalidArgument) }

// Wait blocks until the command has completed and returns its error, if
// it failed.
func (e *Event) Wait() error {
	if e == nil {
		return nil
	}
	if err := e.wait(); err != nil {
		return err
	}
	if e.task != nil && e.q.ctx.tracing.deviceTimes {
		e.q.drainTrace(false)
	}
	return nil
}

// wait waits for the driver event without holding mu, so that Release
// and Status need not wait with it: Release leaves the driver event to
// the last goroutine that waits on it.
func (e *Event) wait() error {
	if f := e.q.ctx.faultErr(); f != nil {
		return fmt.Errorf("wait for %s: %w", e.name, f)
	}
	e.mu.Lock()
	if e.released {
		e.mu.Unlock()
		return e.releasedError("wait for")
	}
	e.waiting++
	drv := e.drv
	e.mu.Unlock()
	err := drv.Wait()
	e.mu.Lock()
	e.waiting--
	if e.released {
		e.dropDriver()
	}
	e.mu.Unlock()
	if err != nil {
		return e.q.ctx.failed(e.q, fmt.Errorf("wait for %s on %q: %w", e.name, e.q.dev.Name, err))
	}
	return nil
}

// WaitContext is Wait bounded by ctx: when ctx is done before the command
// completes, it returns an error wrapping ctx.Err(), and the command runs
// on. The driver's wait, which cannot be stopped, goes on in a goroutine
// of the Event (at most one, whatever the number of callers) until the
// command completes; a later Wait or WaitContext joins it.
func (e *Event) WaitContext(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if ctx.Done() == nil {
		return e.Wait()
	}
	// A background wait of an earlier call outlives a Release, or Close:
	// a released Event is an error here too, as it is for Wait.
	e.mu.Lock()
	released := e.released
	e.mu.Unlock()
	if released {
		return e.releasedError("wait for")
	}
	if s, err := e.status(); err == nil && s == driver.StatusComplete {
		return e.Wait() // returns at once
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wait for %s: %w", e.name, err)
	}
	bg := e.background()
	select {
	case <-bg.done:
	case <-ctx.Done():
		return fmt.Errorf("wait for %s on %q: %w", e.name, e.q.dev.Name, ctx.Err())
	}
	if bg.err != nil {
		return bg.err
	}
	if e.task != nil && e.q.ctx.tracing.deviceTimes {
		e.q.drainTrace(false)
	}
	return nil
}

// background returns the Event's background wait, starting it if none
// has.
func (e *Event) background() *backgroundWait {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bg == nil {
		bg := &backgroundWait{done: make(chan struct{})}
		e.bg = bg
		go func() {
			bg.err = e.wait()
			close(bg.done)
		}()
	}
	return e.bg
}

// dropDriver releases the driver event of a released Event once nothing
// needs it any more: no goroutine waits on it and its queue's trace list
// does not hold it. Called with mu held.
func (s *eventState) dropDriver() error {
	if s.pending || s.waiting > 0 || s.dropped {
		return nil
	}
	s.dropped = true
	return s.drv.Release()
}

// closeRelease releases the event's driver event for Close, leaving it to
// the goroutines that wait on it, if any. The Event's cleanup, if it runs
// later, finds the context closed and does nothing.
func (e *eventState) closeRelease() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return nil
	}
	e.released = true
	return e.dropDriver()
}

// Status returns the command's execution status.
func (e *Event) status() (driver.EventStatus, error) {
	if e == nil {
		return 0, nilEvent("status")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return 0, e.releasedError("status of")
	}
	s, err := e.drv.Status()
	if err != nil {
		return 0, e.q.ctx.failed(e.q, fmt.Errorf("status of %s on %q: %w", e.name, e.q.dev.Name, err))
	}
	return s, nil
}

// Timing is a command's device timestamps: when it was queued, submitted
// to the device, started and ended, each the time since an epoch of the
// device's clock. Only differences between the timestamps of one device
// mean anything.
type Timing struct {
	Queued, Submitted, Started, Ended time.Duration
}

// Timing returns the command's device timestamps. The queue must profile
// (Config.Profiling); Timing waits for the command first (WaitContext
// before it bounds that wait).
func (e *Event) Timing() (Timing, error) {
	if e == nil {
		return Timing{}, nilEvent("timing")
	}
	if !e.q.profiling {
		return Timing{}, fmt.Errorf("timing of %s: %w: queue on %q does not profile", e.name, ErrInvalidArgument, e.q.dev.Name)
	}
	if err := e.Wait(); err != nil {
		return Timing{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		// Released while Wait waited: the wait may have released the
		// driver event on its way out.
		return Timing{}, e.releasedError("timing of")
	}
	t, err := e.drv.Profile()
	if err != nil {
		return Timing{}, fmt.Errorf("timing of %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return Timing{time.Duration(t.Queued), time.Duration(t.Submitted), time.Duration(t.Started), time.Duration(t.Ended)}, nil
}

// Release releases the backend event now rather than when the Event
// becomes unreachable. The command itself is not affected. Using the Event
// afterwards (Wait, Status, Timing, a wait list) is an error wrapping
// ErrReleased; releasing it again does nothing, nor does releasing it
// after its context's Close, which released it.
func (e *Event) Release() error {
	if e == nil {
		return nil
	}
	c := e.q.ctx
	if c.enter() != nil {
		return nil // Close releases it
	}
	defer c.exit()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return nil
	}
	e.released = true
	e.cleanup.Stop()
	c.live.removeEvent(e.eventState)
	// The trace's pending list releases it once it has its times, a
	// goroutine that waits on it once its wait returns.
	if err := e.dropDriver(); err != nil {
		return fmt.Errorf("release event of %s: %w", e.name, err)
	}
	return nil
}

// WaitList is what a facade (rt, rt/codegen, rt/raw) copies a wait list
// of its own events into: a facade's Event is the core's under another
// name, which converts one pointer for free but not a slice of them, and
// a short list copied into a WaitList on the caller's stack costs no
// allocation (no method of the core keeps a wait list).
type WaitList [4]*Event

// Waits returns wait as the core's events, each converted by conv, in l
// when they fit; nil for none.
func Waits[E any](l *WaitList, wait []E, conv func(E) *Event) []*Event {
	if len(wait) == 0 {
		return nil
	}
	return waitsSlow(l, wait, conv)
}

// waitsSlow is Waits for a list that is not empty.
func waitsSlow[E any](l *WaitList, wait []E, conv func(E) *Event) []*Event {
	s := l[:0]
	if len(wait) > len(l) {
		s = make([]*Event, 0, len(wait))
	}
	for _, e := range wait {
		s = append(s, conv(e))
	}
	return s
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
			return nil, fmt.Errorf("wait list: %w", e.releasedError("event of"))
		}
		if err := q.ctx.sameContext("the event of "+e.name, e.q.ctx); err != nil {
			return nil, fmt.Errorf("wait list: %w", err)
		}
		dst = append(dst, e.drv)
	}
	return dst, nil
}
