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

// Event is the completion of one command (rt.Event). mu guards the
// fields below it; a driver wait runs outside it (wait).
type Event struct {
	q    *Queue
	name string
	task *trace.Task // the command's trace task, never released; nil when untraced

	mu       sync.Mutex
	drv      driver.Event
	cleanup  runtime.Cleanup
	released bool
	pending  bool // in its queue's trace list: the list releases drv
	waiting  int  // goroutines in drv.Wait, outside mu: the last one out releases drv if the Event was released meanwhile
	dropped  bool // drv released
	bg       *backgroundWait
}

// backgroundWait is the one driver wait that WaitContext leaves to a
// goroutine of its own: its err is set when done is closed.
type backgroundWait struct {
	done chan struct{}
	err  error
}

type eventHandle struct{ drv driver.Event }

func newEvent(q *Queue, drv driver.Event, name string) *Event {
	e := &Event{q: q, drv: drv, name: name}
	e.cleanup = runtime.AddCleanup(e, func(h eventHandle) { h.drv.Release() }, eventHandle{drv})
	return e
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
	if e.task != nil && e.q.ctx.devTimes {
		e.q.drainTrace(false)
	}
	return nil
}

// wait waits for the driver event without holding mu, so that Release
// and Status need not wait with it: Release leaves the driver event to
// the last goroutine that waits on it.
func (e *Event) wait() error {
	e.mu.Lock()
	if e.released {
		e.mu.Unlock()
		return fmt.Errorf("wait for %s: %w", e.name, ErrReleased)
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
		return fmt.Errorf("wait for %s on %q: %w", e.name, e.q.dev.Name, err)
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
	if e.task != nil && e.q.ctx.devTimes {
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
func (e *Event) dropDriver() error {
	if e.pending || e.waiting > 0 || e.dropped {
		return nil
	}
	e.dropped = true
	return e.drv.Release()
}

// Status returns the command's execution status.
func (e *Event) status() (driver.EventStatus, error) {
	if e == nil {
		return 0, nilEvent("status")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return 0, fmt.Errorf("status of %s: %w", e.name, ErrReleased)
	}
	s, err := e.drv.Status()
	if err != nil {
		return 0, fmt.Errorf("status of %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return s, nil
}

// Timing is rt.Timing, field for field.
type Timing struct {
	Queued, Submitted, Started, Ended time.Duration
}

// Timing returns the command's device timestamps. The queue must profile
// (Config.Profiling); Timing waits for the command first.
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
	t, err := e.drv.Profile()
	if err != nil {
		return Timing{}, fmt.Errorf("timing of %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return Timing{time.Duration(t.Queued), time.Duration(t.Submitted), time.Duration(t.Started), time.Duration(t.Ended)}, nil
}

// Release releases the backend event now rather than when the Event
// becomes unreachable. The command itself is not affected. Using the Event
// afterwards (Wait, Status, Timing, a wait list) is an error wrapping
// ErrReleased; releasing it again does nothing.
func (e *Event) Release() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return nil
	}
	e.released = true
	e.cleanup.Stop()
	// The trace's pending list releases it once it has its times, a
	// goroutine that waits on it once its wait returns.
	if err := e.dropDriver(); err != nil {
		return fmt.Errorf("release event of %s: %w", e.name, err)
	}
	return nil
}
