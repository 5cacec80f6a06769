package core

import (
	"context"
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
// beyond the pool's size share queues evenly rather than wait. A queue
// bound to a request (AcquireQueueContext, queuebind.go) is never
// shared: AcquireQueueContext waits for a release past max queues, and
// AcquireQueue makes one more when every queue is bound. Of the idle
// queues, both prefer one whose last request's work has completed (busy,
// a marker of it, settled), so that the next request is not ordered
// behind a cancelled request's commands while another queue is free.
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

	mu     sync.Mutex              // guards the fields below, and the queues' gate.holders and busy; never held across a driver call (a busy marker is released after it)
	queues []*Queue                // every queue of the pool, in the order made
	idle   [numPriorities][]*Queue // the queues that no goroutine holds, by the priority asked of them
	making [numPriorities]int      // queues being made, outside mu, by priority
	// released is closed, and cleared, when a queue becomes idle or one
	// being made is done, for AcquireQueueContext's waiters and Shutdown's
	// wait for the queues (waitPoolIdle); nil while none waits.
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
// preferring one whose last request's work has completed, else a new one
// while the pool has fewer than Config.QueuePool (at least 16 by
// default), else the one that the fewest goroutines hold, shared; a queue
// that AcquireQueueContext bound to a request is never shared, and when
// every queue of the pool is so held, AcquireQueue makes one more.
// AcquireQueue never waits, not even for a kernel that runs on the
// context's other queues. The pool's queues are on the first device; on
// another, make a queue with NewQueue and give it back with
// Queue.Release. A request's commands on its queue run in order, as on
// any queue; the next request to get the queue finds them enqueued before
// its own. The context releases the pool's queues on Close. Once Shutdown
// has begun, AcquireQueue fails at once with an error wrapping
// ErrShuttingDown, and the queues held then are the work that Shutdown
// waits for.
func (c *Context) AcquireQueue() (*Queue, error) {
	return c.acquireQueue(nil, QueueConfig{})
}

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
	return c.acquireQueue(nil, cfg)
}

// AcquireQueueContext is AcquireQueueConfig, with cfg's defaults where
// cfg is nil, for a request bounded by ctx, as sql.DB.BeginTx begins a
// transaction: the queue it returns is the caller's alone and bound to
// ctx until ReleaseQueue. Once ctx is done, every command enqueued on it (a kernel
// launch, a graph launch, a transfer, a fill) fails at once with an error
// wrapping ctx.Err(), and no more of the request's work is handed to the
// device; the commands already enqueued run on, and there are at most
// Config.MaxQueueAhead of them (4 by default): an enqueue that would keep
// more ahead of the host waits until the device has completed the oldest,
// or ctx is done. So a request that enqueues 500 iterations and then reads
// their result needs no pacing of its own, and its cancellation leaves the
// device a few commands' work. A blocking transfer on the queue (Read,
// Write) is bounded by ctx as its Context form is.
//
//	q, err := ctx.AcquireQueueContext(r.Context(), nil)
//	if err != nil {
//		return err
//	}
//	defer ctx.ReleaseQueue(q)
//	for range 500 {
//		if err := (&Step{...}).Enqueue(q, rng); err != nil {
//			return err // wraps r.Context().Err() once the request is cancelled
//		}
//	}
//	return out.Read(q, res)
//
// The pool hands the next request a queue whose last request's work has
// completed while it has one, or may make one. Past Config.QueuePool
// queues, all held, AcquireQueueContext waits for one to be released, or
// for ctx to be done (an error wrapping ctx.Err()).
func (c *Context) AcquireQueueContext(ctx context.Context, cfg *QueueConfig) (*Queue, error) {
	if ctx == nil {
		return nil, fmt.Errorf("acquire queue: %w: nil context.Context", ErrInvalidArgument)
	}
	if cfg == nil {
		cfg = &QueueConfig{}
	}
	return c.acquireQueue(ctx, *cfg)
}

// acquireQueue is AcquireQueueConfig, with its queue bound to ctx unless
// ctx is nil. A bound queue is the caller's alone, so past the
// pool's size it waits for a release.
func (c *Context) acquireQueue(ctx context.Context, cfg QueueConfig) (*Queue, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("acquire queue: %w", err)
	}
	for {
		if ctx != nil {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("acquire queue: %w", err)
			}
		}
		if err := c.enter(); err != nil {
			return nil, fmt.Errorf("acquire queue: %w", err)
		}
		q, wake, err := c.takeQueue(cfg, ctx)
		c.exit()
		if q != nil || err != nil {
			return q, err
		}
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}

// takeQueue takes a queue of the pool asked for cfg.Priority, for a
// request that holds it alone, bound to ctx (a bound queue), or not (ctx
// nil): an idle one, preferring one whose last request's work has
// completed; else a new one while the pool may make one; else an idle one
// still busy; else, not alone, the unbound one that the fewest goroutines
// hold, shared; else none, and a channel that the next release closes. A
// queue taken alone is bound under mu, before leastHeld can see it
// unbound and share it. Called inside c's enter.
func (c *Context) takeQueue(cfg QueueConfig, ctx context.Context) (*Queue, <-chan struct{}, error) {
	p := &c.pool
	prio := cfg.Priority
	alone := ctx != nil
	p.mu.Lock()
	if c.draining.Load() {
		p.mu.Unlock()
		return nil, nil, fmt.Errorf("acquire queue: %w", c.drainingError())
	}
	if i := p.settledIdle(prio); i >= 0 {
		q, busy := p.take(prio, i)
		if alone {
			q.bindContext(ctx)
		}
		p.mu.Unlock()
		busy.Release()
		return q, nil, nil
	}
	shared, n := p.leastHeld(prio)
	if alone {
		shared = nil
	}
	if n+p.making[prio] < p.max || !alone && shared == nil && len(p.idle[prio]) == 0 {
		p.making[prio]++
		p.mu.Unlock()
		q, err := c.newQueue(c.devices[0], cfg)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making[prio]--
		if err != nil {
			p.wakeLocked()
			return nil, nil, fmt.Errorf("acquire queue: %w", err)
		}
		q.pooled = true
		q.gate.holders.Store(1)
		if alone {
			q.bindContext(ctx)
		}
		p.queues = append(p.queues, q)
		return q, nil, nil
	}
	if k := len(p.idle[prio]); k > 0 {
		q, busy := p.take(prio, k-1)
		if alone {
			q.bindContext(ctx)
		}
		p.mu.Unlock()
		busy.Release()
		return q, nil, nil
	}
	defer p.mu.Unlock()
	if shared != nil {
		shared.gate.holders.Add(1)
		return shared, nil, nil
	}
	if c.closed.Load() {
		// Close, which sets closed before its wakeAll takes mu, may have
		// woken the waiters already: a channel made now would not be
		// closed.
		return nil, nil, fmt.Errorf("acquire queue: %w", c.closedError())
	}
	if p.released == nil {
		p.released = make(chan struct{})
	}
	return nil, p.released, nil
}

// leastHeld returns the pool's unbound queue asked for prio that the
// fewest goroutines hold (nil if none), and the number of the pool's
// queues asked for prio. Called with mu held.
func (p *queuePool) leastHeld(prio Priority) (least *Queue, n int) {
	for _, q := range p.queues {
		if q.asked != prio {
			continue
		}
		n++
		if q.bind.Load() == nil && (least == nil || q.gate.holders.Load() < least.gate.holders.Load()) {
			least = q
		}
	}
	return least, n
}

// settledIdle returns the index in p.idle[prio] of the queue released
// last of those whose last request's work has completed, or -1. Called
// with mu held; it makes no driver call.
func (p *queuePool) settledIdle(prio Priority) int {
	idle := p.idle[prio]
	for i := len(idle) - 1; i >= 0; i-- {
		if b := idle[i].busy; b == nil || b.settled() {
			return i
		}
	}
	return -1
}

// take removes p.idle[prio][i] from the idle queues and returns it, held
// once, with the marker of its last request's work (or nil), which the
// caller releases once mu is unlocked: Event.Release is a driver call.
// Called with mu held.
func (p *queuePool) take(prio Priority, i int) (*Queue, *Event) {
	q := p.idle[prio][i]
	p.idle[prio] = append(p.idle[prio][:i], p.idle[prio][i+1:]...)
	q.gate.holders.Add(1)
	busy := q.busy
	q.busy = nil
	return q, busy
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

// ReleaseQueue gives back a queue that AcquireQueue, AcquireQueueConfig
// or AcquireQueueContext returned, for another goroutine to acquire; the
// caller must not use it afterwards (once Shutdown has begun, its calls
// fail with ErrShuttingDown), and the queue is no longer bound to the
// caller's ctx. A queue that is not the pool's, or that was released more
// often than acquired, is an error wrapping ErrInvalidArgument.
func (c *Context) ReleaseQueue(q *Queue) error {
	if q == nil || q.ctx != c {
		return fmt.Errorf("release queue: %w: not a queue of this context's pool", ErrInvalidArgument)
	}
	busy, err := q.unbind()
	if err != nil {
		return err
	}
	p := &c.pool
	p.mu.Lock()
	drop, err := p.releaseLocked(q, busy) // Event.Release is a driver call: after mu
	p.mu.Unlock()
	drop.Release()
	return err
}

// releaseLocked gives q back to the pool with busy, the marker of the work
// its request left, and returns the marker that the caller releases once
// mu is unlocked (nil for none). Called with mu held.
func (p *queuePool) releaseLocked(q *Queue, busy *Event) (*Event, error) {
	if !q.pooled {
		return busy, fmt.Errorf("release queue %d on %q: %w: not a queue of this context's pool", q.id, q.dev.Name, ErrInvalidArgument)
	}
	if q.gate.holders.Load() == 0 {
		return busy, fmt.Errorf("release queue %d on %q: %w: released more often than acquired", q.id, q.dev.Name, ErrInvalidArgument)
	}
	defer p.wakeLocked()
	if q.gate.holders.Add(-1) != 0 {
		return busy, nil
	}
	old := q.busy
	q.busy = busy
	p.idle[q.asked] = append(p.idle[q.asked], q)
	return old, nil
}

// unbind ends the binding of q to its holder's context, if one binds it,
// and returns the marker of the work it may have left, or nil. A queue
// of the pool that is not held is an error wrapping ErrInvalidArgument.
func (q *Queue) unbind() (*Event, error) {
	b := q.bind.Load()
	if b == nil {
		return nil, nil
	}
	if !q.bind.CompareAndSwap(b, nil) {
		return nil, fmt.Errorf("release queue %d on %q: %w: released more often than acquired", q.id, q.dev.Name, ErrInvalidArgument)
	}
	if err := q.enter(); err != nil {
		return nil, nil // Close releases the markers
	}
	defer q.exit()
	return b.unbind(q), nil
}

// wakeLocked wakes the goroutines that wait for a queue of the pool to be
// released (AcquireQueueContext, waitPoolIdle), if any. Called with mu
// held.
func (p *queuePool) wakeLocked() {
	if p.released != nil {
		close(p.released)
		p.released = nil
	}
}

// wakeAll wakes the pool's waiters for Close, which they then see.
func (p *queuePool) wakeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakeLocked()
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
