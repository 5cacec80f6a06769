package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
)

// Shutdown and the health check, as net/http's Server.Shutdown and a
// readiness or liveness probe know them.
//
// The states of a context, as Health reports them: ready; draining, from
// Shutdown until the queues that the pool had handed out are given back
// (draining set: AcquireQueue and NewQueue fail, and so do the calls on
// every other queue, Queue.enter); closed; faulted (fault.go), which
// Health notices by a probe of each device without waiting for a call
// of the user's.

// shutdownState is Shutdown's drain: started once, by the first Shutdown,
// in a goroutine of its own that outlives a Shutdown whose ctx ends first.
type shutdownState struct {
	once sync.Once
	done chan struct{} // closed once the drain has closed the context; made by once
	err  error         // Close's error; written before done is closed
}

// Shutdown shuts the context down without interrupting the work that
// holds a queue of the pool, as http.Server.Shutdown does a server's
// connections: it stops handing out queues and taking new work, waits
// until every queue acquired before it began is given back, then closes
// the context (Close), which waits for their commands to complete.
//
// From the moment Shutdown begins, AcquireQueue and NewQueue fail at once
// with an error wrapping ErrShuttingDown (an AcquireQueueContext waiting
// for a queue too), and so does every call on a
// queue that no goroutine holds from the pool: the default queue, the
// queues of NewQueue, and a pool queue once given back. Calls on the
// queues held (and on their recording queues) go on, as do the calls of
// the context as a whole that they make (NewBuffer, builds, events,
// Free). Health reports the context draining.
//
// When ctx is done first, Shutdown returns an error wrapping ctx.Err()
// that says how many holds of the pool's queues were left; the drain goes
// on, and the context closes itself once they are given back. Call Close
// to close it at once: Close waits only for the calls in progress, and
// the held queues' later calls fail with ErrClosed. Shutdown may be
// called from several goroutines, and again: each returns once the
// context is closed, with Close's error, or when its own ctx is done.
func (c *Context) Shutdown(ctx context.Context) error {
	if c == nil {
		return fmt.Errorf("shut down context: %w: nil context", ErrInvalidArgument)
	}
	if ctx == nil {
		return fmt.Errorf("shut down context: %w: nil context.Context", ErrInvalidArgument)
	}
	s := &c.shut
	s.once.Do(func() {
		s.done = make(chan struct{})
		c.pool.mu.Lock()
		c.draining.Store(true)
		c.pool.wakeLocked() // AcquireQueueContext's waiters fail now
		c.pool.mu.Unlock()
		go func() {
			c.waitPoolIdle()
			s.err = c.closeWait()
			close(s.done)
		}()
	})
	select {
	case <-s.done:
		if s.err != nil {
			return fmt.Errorf("shut down context: %w", s.err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shut down context on %s: queues of the pool still held (%d holds): %w", c.deviceLabel(), c.pool.heldQueues(), ctx.Err())
	}
}

// drainingError is the error of a call that a draining context refuses;
// the caller wraps it with the operation.
func (c *Context) drainingError() error {
	return fmt.Errorf("context on %s %w", c.deviceLabel(), ErrShuttingDown)
}

// healthProbe is Health's probe: a driver queue of its own per device,
// made by the first probe, on which each probe enqueues a marker and
// queries it, so that a device fault shows without a call of the user's
// and without waiting for their work. One Health call at a time probes:
// busy is set while it does, and that call owns queues; Close releases
// them once no call is inside.
type healthProbe struct {
	busy   atomic.Bool
	queues []driver.Queue // by device index; nil until a probe made it
}

// Health reports whether the context serves, for a readiness or liveness
// probe: nil while it does; else an error that says why not and that
// tells the states apart:
//
//   - draining: Shutdown has begun; an error wrapping ErrShuttingDown;
//   - closed: an error wrapping ErrClosed (and ErrDeviceFault, after a
//     fault);
//   - faulted: the *DeviceFault (ErrDeviceFault), as Err returns it.
//
// A context that is neither closed nor known to be faulted is probed: a
// marker is enqueued on a queue of Health's own on each device and its
// status queried, which returns at once whatever the device runs, so a
// fault that no call has noticed yet makes Health return it. Health
// never waits for the device; while one call probes, others report what
// the context knows.
func (c *Context) Health() error {
	if c == nil {
		return fmt.Errorf("health: %w: nil context", ErrInvalidArgument)
	}
	if c.closed.Load() {
		return fmt.Errorf("health: %w", c.closedError())
	}
	if f := c.fault.recorded.Load(); f != nil {
		return f
	}
	if err := c.probe(); err != nil {
		return err
	}
	if c.draining.Load() {
		return fmt.Errorf("health: %w", c.drainingError())
	}
	return nil
}

// probe checks each device with a marker on Health's queue there, unless
// another call is probing. It returns the context's fault if it knows or
// notices one, and the error of a probe that failed otherwise.
func (c *Context) probe() error {
	h := &c.health
	if !h.busy.CompareAndSwap(false, true) {
		return c.faultErr()
	}
	defer h.busy.Store(false)
	if err := c.enter(); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer c.exit()
	if h.queues == nil {
		h.queues = make([]driver.Queue, len(c.devices))
	}
	for i, d := range c.devices {
		if h.queues[i] == nil {
			q, err := c.drv.NewQueue(i, false)
			if err != nil {
				return c.failed(nil, fmt.Errorf("health: create probe queue on %q: %w", d.Name, err))
			}
			h.queues[i] = q
		}
		ev, err := h.queues[i].Marker(nil)
		if err == nil {
			_, err = ev.Status()
			ev.Release()
		}
		if err != nil {
			return c.failed(nil, fmt.Errorf("health: probe %q: %w", d.Name, err))
		}
	}
	return nil
}

// closeHealth releases Health's queues. Close calls it once no call is
// inside, so no probe runs.
func (c *Context) closeHealth() []error {
	var errs []error
	for i, q := range c.health.queues {
		if q == nil {
			continue
		}
		if err := q.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release probe queue on %q: %w", c.devices[i].Name, err))
		}
	}
	c.health.queues = nil
	return errs
}
