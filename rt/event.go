package rt

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Event is the completion status of one enqueued command. Pass it in a wait
// list to order commands, or Wait for it. The backend event is released
// when the Event becomes unreachable, or earlier by Release.
type Event struct {
	q    *Queue
	name string
	task *trace.Task // the command's trace task, never released; nil when untraced

	mu       sync.Mutex
	drv      driver.Event
	cleanup  runtime.Cleanup
	released bool
	pending  bool // in its queue's trace list: the list releases drv
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

func (e *Event) wait() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return fmt.Errorf("wait for %s: %w", e.name, ErrReleased)
	}
	if err := e.drv.Wait(); err != nil {
		return fmt.Errorf("wait for %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return nil
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

// Timing is a command's device timestamps: when it was queued, submitted
// to the device, started and ended, each the time since an epoch of the
// device's clock. Only differences between the timestamps of one device
// mean anything.
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
	if e.pending {
		return nil // the trace's pending list releases it once it has its times
	}
	if err := e.drv.Release(); err != nil {
		return fmt.Errorf("release event of %s: %w", e.name, err)
	}
	return nil
}
