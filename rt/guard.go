package rt

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// closeGuard makes Context.Close safe under concurrent use. Every call that
// uses the context's driver objects runs between enter and exit; Close marks
// the context closed, then waits until no call is inside before it releases
// anything. A call that enters after Close has begun fails with ErrClosed,
// so no driver object is released while a call uses it, and none is used
// after it was released.
//
// enter increments a counter and then reads the closed flag; Close sets the
// flag and then reads the counter. Both are sequentially consistent atomics,
// so either the call sees the flag, or Close sees the call. Calls may nest.
type closeGuard struct {
	n    atomic.Int64 // calls inside
	mu   sync.Mutex
	idle sync.Cond // signalled when n drops to 0 after Close began; L is mu
}

// enter registers a call that uses c's driver objects. It fails with an
// error wrapping ErrClosed once Close has begun, and with one wrapping
// ErrInvalidArgument for a nil context. Every nil error is matched by one
// exit.
func (c *Context) enter() error {
	if c == nil {
		return fmt.Errorf("context: %w: nil context", ErrInvalidArgument)
	}
	c.guard.n.Add(1)
	if c.closed.Load() {
		c.exit()
		return fmt.Errorf("context: %w", ErrClosed)
	}
	return nil
}

// exit ends a call that enter registered.
func (c *Context) exit() {
	if c.guard.n.Add(-1) == 0 && c.closed.Load() {
		c.guard.mu.Lock()
		c.guard.idle.Broadcast()
		c.guard.mu.Unlock()
	}
}

// drain waits until every call that entered before Close has exited. Close
// calls it with c.closed set.
func (c *Context) drain() {
	g := &c.guard
	g.mu.Lock()
	g.idle.L = &g.mu
	for g.n.Load() != 0 {
		g.idle.Wait()
	}
	g.mu.Unlock()
}

// enter is Context.enter for a call on q; a nil q is an error wrapping
// ErrInvalidArgument.
func (q *Queue) enter() error {
	if q == nil {
		return fmt.Errorf("queue: %w: nil queue", ErrInvalidArgument)
	}
	if r := q.rec.Load(); r != nil {
		if err := r.checkGoroutine(q); err != nil {
			return err
		}
	}
	return q.ctx.enter()
}
