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
// The pool serves each priority (priority.go) apart, with up to max
// queues of its own: AcquireQueueConfig hands out only queues made at the
// priority it is asked for, and shares only those.
//
// Once Shutdown has begun, AcquireQueue fails, and the queues held then
// are the work that Shutdown waits for (shutdown.go).
//
// The pool serves the context's first device, where a server's requests
// run; a goroutine that works on another device makes a queue there with
// NewQueue and gives it back with Queue.Release (queue.go). A queue of
// the pool is never released before Close: Release refuses it.

// queuePool is a context's pool of queues on its first device.
type queuePool struct {
	max int // the most queues the pool makes at each priority; set at Open

	mu     sync.Mutex              // guards the fields below, and the queues' gate.holders; never held across a driver call
	queues []*Queue                // every queue of the pool, in the order made
	idle   [numPriorities][]*Queue // the queues that no goroutine holds, by the priority asked of them
	making [numPriorities]int      // queues being made, outside mu, by priority
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
// shared. AcquireQueue never waits, not even for a kernel that runs on
// the context's other queues. The pool's queues are on the first device;
// on another, make a queue with NewQueue and give it back with
// Queue.Release. A request's commands on its queue run in order, as on
// any queue; the next request to get the queue finds them enqueued before
// its own. The context releases the pool's queues on
// Close. Once Shutdown has begun, AcquireQueue fails at once with an error
// wrapping ErrShuttingDown, and the queues held then are the work that
// Shutdown waits for.
func (c *Context) AcquireQueue() (*Queue, error) { return c.AcquireQueueConfig(QueueConfig{}) }

// AcquireQueueConfig is AcquireQueue for a queue made with cfg. The pool
// keeps the queues of each priority apart, up to Config.QueuePool of
// each: a queue acquired at PriorityHigh is one made at PriorityHigh, and
// never one that a request of another priority holds or held, so that a
// latency-sensitive request is ordered behind no batch request's
// commands, even on a device without priorities. A priority that is not
// one of Priority's constants is an error wrapping ErrInvalidArgument.
//
//	q, err := ctx.AcquireQueueConfig(rt.QueueConfig{Priority: rt.PriorityHigh})
func (c *Context) AcquireQueueConfig(cfg QueueConfig) (*Queue, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("acquire queue: %w", err)
	}
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("acquire queue: %w", err)
	}
	defer c.exit()
	p := &c.pool
	prio := cfg.Priority
	p.mu.Lock()
	if c.draining.Load() {
		p.mu.Unlock()
		return nil, fmt.Errorf("acquire queue: %w", c.drainingError())
	}
	if n := len(p.idle[prio]); n > 0 {
		q := p.idle[prio][n-1]
		p.idle[prio] = p.idle[prio][:n-1]
		q.gate.holders.Add(1)
		p.mu.Unlock()
		return q, nil
	}
	least, n := p.leastHeld(prio)
	if n+p.making[prio] < p.max || n == 0 {
		p.making[prio]++
		p.mu.Unlock()
		q, err := c.newQueue(c.devices[0], cfg)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making[prio]--
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
	least.gate.holders.Add(1)
	return least, nil
}

// leastHeld returns the pool's queue asked for prio that the fewest
// goroutines hold, and the number of the pool's queues asked for prio.
// Called with mu held.
func (p *queuePool) leastHeld(prio Priority) (least *Queue, n int) {
	for _, q := range p.queues {
		if q.asked != prio {
			continue
		}
		if n++; least == nil || q.gate.holders.Load() < least.gate.holders.Load() {
			least = q
		}
	}
	return least, n
}

// makingLocked returns the number of queues being made, at every
// priority. Called with mu held.
func (p *queuePool) makingLocked() int {
	n := 0
	for _, m := range p.making {
		n += m
	}
	return n
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
		p.idle[q.asked] = append(p.idle[q.asked], q)
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
		held := p.makingLocked() > 0
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
	n := p.makingLocked()
	for _, q := range p.queues {
		n += int(q.gate.holders.Load())
	}
	return n
}
