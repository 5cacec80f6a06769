package rt

import (
	"context"
	"time"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// Event is the completion status of one enqueued command. Pass it in a wait
// list to order commands, or Wait for it. The backend event is released
// when the Event becomes unreachable, or earlier by Release.
type Event core.Event

// core returns e as the core's event.
func (e *Event) core() *core.Event { return (*core.Event)(e) }

// waits returns the wait list wait as the core takes it, in l when it
// fits.
func waits(l *core.WaitList, wait []*Event) []*core.Event {
	return core.Waits(l, wait, (*Event).core)
}

// Wait blocks until the command has completed and returns its error, if
// it failed.
func (e *Event) Wait() error { return e.core().Wait() }

// WaitContext is Wait bounded by ctx: when ctx is done before the command
// completes, it returns an error wrapping ctx.Err(), and the command runs
// on. The driver's wait, which cannot be stopped, goes on in a goroutine
// of the Event (at most one, whatever the number of callers) until the
// command completes; a later Wait or WaitContext joins it.
func (e *Event) WaitContext(ctx context.Context) error { return e.core().WaitContext(ctx) }

// Timing returns the command's device timestamps. The queue must profile
// (Config.Profiling); Timing waits for the command first (WaitContext
// before it bounds that wait).
func (e *Event) Timing() (Timing, error) {
	t, err := e.core().Timing()
	return Timing(t), err
}

// Release releases the backend event now rather than when the Event
// becomes unreachable. The command itself is not affected. Using the Event
// afterwards (Wait, Status, Timing, a wait list) is an error wrapping
// ErrReleased; releasing it again does nothing, nor does releasing it
// after its context's Close, which released it.
func (e *Event) Release() error { return e.core().Release() }

// Timing is a command's device timestamps: when it was queued, submitted
// to the device, started and ended, each the time since an epoch of the
// device's clock. Only differences between the timestamps of one device
// mean anything.
type Timing struct {
	Queued, Submitted, Started, Ended time.Duration
}
