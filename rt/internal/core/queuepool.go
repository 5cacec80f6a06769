package core

import (
	"fmt"
	"sync"
)

// The queue pool: queues for goroutines that live for one request. A
// server that gives each request a queue of its own (NewQueue) makes a
// driver queue per request and never releases one before Close; one that
// shares a queue between its requests orders them all behind each other,
// and their launches share kernel instances (instance.go). AcquireQueue
// hands a request a queue that no other goroutine holds, as long as the
// pool has one or may make one, and ReleaseQueue takes it back for the
// next request: a request launches as a goroutine with a queue of its own
// does, without a lock and without a kernel object of its own.
//
// Past max queues, every queue is held: AcquireQueue never waits, and
// shares the queue that the fewest goroutines hold, so that requests
// beyond the pool's size share queues evenly rather than wait.
//
// Once Shutdown has begun, AcquireQueue fails, and the queues held then
// are the work that Shutdown waits for (shutdown.go).

// queuePool is a context's pool of queues on its first device.
type queuePool struct {
	max int // the most queues the pool makes; set at Open

	mu     sync.Mutex // guards the fields below, and the queues' gate.holders; never held across a driver call
	queues []*Queue   // every queue of the pool, in the order made
	idle   []*Queue   // the queues that no goroutine holds
	making int        // queues being made, outside mu
	// released is closed, and replaced, when a queue becomes idle or one
	// being made is done, while Shutdown waits for them (waitPoolIdle).
	released chan struct{}
}

// AcquireQueue returns a queue on the context's first device for the
// caller's use until it gives it back with ReleaseQueue: the way for a
// goroutine that lives for one request (a server's handler) to launch
// with no queue of its own and without ordering its commands behind every
// other request's on one shared queue.
//
//	q, err := ctx.AcquireQueue()
//	if err != nil {
//		return err
//	}
//	defer ctx.ReleaseQueue(q)
//	// allocate, launch and read on q
//
// The queue comes from the context's pool: one that no goroutine holds,
// else a new one while the pool has fewer than Config.QueuePool
// (at least 16 by default), else the one that the fewest goroutines hold,
// shared. AcquireQueue never waits. A request's commands on its queue run
// in order, as on any queue; the next request to get the queue finds them
// enqueued before its own. The context releases the pool's queues on
// Close. Once Shutdown has begun, AcquireQueue fails at once with an error
// wrapping ErrShuttingDown, and the queues held then are the work that
// Shutdown waits for.
func (c *Context) AcquireQueue() (*Queue, error) {
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("acquire queue: %w", err)
	}
	defer c.exit()
	p := &c.pool
	p.mu.Lock()
	if c.draining.Load() {
		p.mu.Unlock()
		return nil, fmt.Errorf("acquire queue: %w", c.drainingError())
	}
	if n := len(p.idle); n > 0 {
		q := p.idle[n-1]
		p.idle = p.idle[:n-1]
		q.gate.holders.Add(1)
		p.mu.Unlock()
		return q, nil
	}
	if len(p.queues)+p.making < p.max || len(p.queues) == 0 {
		p.making++
		p.mu.Unlock()
		q, err := c.newQueue(c.devices[0])
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making--
		if err != nil {
			p.wakeLocked()
			return nil, fmt.Errorf("acquire queue: %w", err)
		}
		q.pooled = true
		q.gate.holders.Store(1)
		p.queues = append(p.queues, q)
		return q, nil
	}
	defer p.mu.Unlock()
	q := p.queues[0]
	for _, o := range p.queues[1:] {
		if o.gate.holders.Load() < q.gate.holders.Load() {
			q = o
		}
	}
	q.gate.holders.Add(1)
	return q, nil
}

// ReleaseQueue gives back a queue that AcquireQueue returned, for another
// goroutine to acquire; the caller must not use it afterwards (once
// Shutdown has begun, its calls fail with ErrShuttingDown). A queue
// that is not the pool's, or that was released more often than acquired,
// is an error wrapping ErrInvalidArgument.
func (c *Context) ReleaseQueue(q *Queue) error {
	if q == nil || q.ctx != c {
		return fmt.Errorf("release queue: %w: not a queue of this context's pool", ErrInvalidArgument)
	}
	p := &c.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if !q.pooled {
		return fmt.Errorf("release queue %d on %q: %w: not a queue of this context's pool", q.id, q.dev.Name, ErrInvalidArgument)
	}
	if q.gate.holders.Load() == 0 {
		return fmt.Errorf("release queue %d on %q: %w: released more often than acquired", q.id, q.dev.Name, ErrInvalidArgument)
	}
	if q.gate.holders.Add(-1) == 0 {
		p.idle = append(p.idle, q)
		p.wakeLocked()
	}
	return nil
}

// wakeLocked wakes Shutdown's wait for the pool's queues (waitPoolIdle), if
// it waits. Called with mu held.
func (p *queuePool) wakeLocked() {
	if p.released != nil {
		close(p.released)
		p.released = make(chan struct{})
	}
}

// waitPoolIdle waits until no goroutine holds a queue of the pool and none is
// being made, or c is closed. Shutdown's drain calls it with c.draining
// set, so that no queue is acquired meanwhile.
func (c *Context) waitPoolIdle() {
	p := &c.pool
	for {
		p.mu.Lock()
		if p.released == nil {
			p.released = make(chan struct{})
		}
		held := p.making > 0
		for _, q := range p.queues {
			held = held || q.gate.holders.Load() > 0
		}
		ch := p.released
		p.mu.Unlock()
		if !held || c.closed.Load() {
			return
		}
		<-ch
	}
}

// heldQueues returns the number of goroutines that hold the pool's
// queues, for Shutdown's error.
func (p *queuePool) heldQueues() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.making
	for _, q := range p.queues {
		n += int(q.gate.holders.Load())
	}
	return n
}
