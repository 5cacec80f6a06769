package core

import (
	"fmt"
	"sync"
)

// The queue pool: queues for goroutines that live for one request. A
// server that gives each request a queue of its own (NewQueue, and
// Queue.Release at its end) makes and releases a driver queue per
// request; one that shares a queue between its requests orders them all
// behind each other, and their launches share kernel instances
// (instance.go). AcquireQueue
// hands a request a queue that no other goroutine holds, as long as the
// pool has one or may make one, and ReleaseQueue takes it back for the
// next request: a request launches as a goroutine with a queue of its own
// does, without a lock and without a kernel object of its own.
//
// Past max queues, every queue is held: AcquireQueue never waits, and
// shares the queue that the fewest goroutines hold, so that requests
// beyond the pool's size share queues evenly rather than wait.
//
// The pool serves the context's first device, where a server's requests
// run; a goroutine that works on another device makes a queue there with
// NewQueue and gives it back with Queue.Release (queue.go). A queue of
// the pool is never released before Close: Release refuses it.

// queuePool is a context's pool of queues on its first device.
type queuePool struct {
	max int // the most queues the pool makes; set at Open

	mu     sync.Mutex // guards the fields below; never held across a driver call
	queues []*Queue   // every queue of the pool, in the order made
	idle   []*Queue   // the queues that no goroutine holds
	making int        // queues being made, outside mu
}

// AcquireQueue returns a queue of the pool: an idle one, else a new one
// while the pool has fewer than max (or none yet), else the one that the
// fewest goroutines hold. ReleaseQueue gives it back.
func (c *Context) AcquireQueue() (*Queue, error) {
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("acquire queue: %w", err)
	}
	defer c.exit()
	p := &c.pool
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		q := p.idle[n-1]
		p.idle = p.idle[:n-1]
		q.holders++
		p.mu.Unlock()
		return q, nil
	}
	if len(p.queues)+p.making < p.max || len(p.queues) == 0 {
		p.making++
		p.mu.Unlock()
		q, err := c.NewQueue(c.devices[0])
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making--
		if err != nil {
			return nil, fmt.Errorf("acquire queue: %w", err)
		}
		q.pooled, q.holders = true, 1
		p.queues = append(p.queues, q)
		return q, nil
	}
	defer p.mu.Unlock()
	q := p.queues[0]
	for _, o := range p.queues[1:] {
		if o.holders < q.holders {
			q = o
		}
	}
	q.holders++
	return q, nil
}

// ReleaseQueue gives back a queue that AcquireQueue returned; the queue
// is idle once every goroutine that holds it has given it back.
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
	if q.holders == 0 {
		return fmt.Errorf("release queue %d on %q: %w: released more often than acquired", q.id, q.dev.Name, ErrInvalidArgument)
	}
	q.holders--
	if q.holders == 0 {
		p.idle = append(p.idle, q)
	}
	return nil
}
