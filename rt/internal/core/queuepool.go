package core

import (
	"context"
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

// queuePool is a context's pool of queues on its first device.
type queuePool struct {
	max int // the most queues the pool makes; set at Open

	mu     sync.Mutex    // guards the fields below; never held across a driver call
	queues []*Queue      // every queue of the pool, in the order made
	idle   []*Queue      // the queues that no goroutine holds
	making int           // queues being made, outside mu
	wake   chan struct{} // closed by the next release, for AcquireQueueContext's waiters; nil when none waits
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
// shared. AcquireQueue never waits. Of the queues that no goroutine
// holds, it prefers those whose last request's work has completed. A
// request's commands on its queue run in order, as on any queue; the
// next request to get the queue finds them enqueued before its own. The
// context releases the pool's queues on Close.
//
// A queue that AcquireQueueContext bound to a request is never shared:
// when every queue of the pool is so held, AcquireQueue makes one more.
func (c *Context) AcquireQueue() (*Queue, error) {
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("acquire queue: %w", err)
	}
	defer c.exit()
	q, _, err := c.takeQueue(false)
	return q, err
}

// AcquireQueueContext is AcquireQueue for a request bounded by ctx: the
// queue it returns is the caller's alone and bound to ctx until
// ReleaseQueue. Once ctx is done, every command enqueued on it (a kernel
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
//	q, err := ctx.AcquireQueueContext(r.Context())
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
func (c *Context) AcquireQueueContext(ctx context.Context) (*Queue, error) {
	if ctx == nil {
		return nil, fmt.Errorf("acquire queue: %w: nil context.Context", ErrInvalidArgument)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("acquire queue: %w", err)
		}
		if err := c.enter(); err != nil {
			return nil, fmt.Errorf("acquire queue: %w", err)
		}
		q, wake, err := c.takeQueue(true)
		if q != nil {
			q.bindContext(ctx)
		}
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

// takeQueue takes a queue of the pool for AcquireQueue, or for
// AcquireQueueContext (alone set): an idle one, preferring one whose
// last request's work has completed; else a new one while the pool may
// make one; else an idle one still busy; else, shared, the unbound one
// that the fewest goroutines hold, or for alone, none and a channel
// that the next release closes. Called inside c's enter.
func (c *Context) takeQueue(alone bool) (*Queue, <-chan struct{}, error) {
	p := &c.pool
	p.mu.Lock()
	if i := p.idleQueue(); i >= 0 {
		q := p.take(i)
		p.mu.Unlock()
		return q, nil, nil
	}
	var shared *Queue
	if !alone {
		for _, o := range p.queues {
			if o.bind.Load() == nil && (shared == nil || o.holders < shared.holders) {
				shared = o
			}
		}
	}
	if len(p.queues)+p.making < p.max || len(p.queues) == 0 || !alone && shared == nil {
		p.making++
		p.mu.Unlock()
		q, err := c.NewQueue(c.devices[0])
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making--
		if err != nil {
			return nil, nil, fmt.Errorf("acquire queue: %w", err)
		}
		q.pooled, q.holders = true, 1
		p.queues = append(p.queues, q)
		return q, nil, nil
	}
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		return p.take(n - 1), nil, nil
	}
	if shared != nil {
		shared.holders++
		return shared, nil, nil
	}
	if p.wake == nil {
		p.wake = make(chan struct{})
	}
	return nil, p.wake, nil
}

// idleQueue returns the index in p.idle of the queue that was released
// last of those whose last request's work has completed, or -1. Called
// with p.mu held; it makes no driver call.
func (p *queuePool) idleQueue() int {
	for i := len(p.idle) - 1; i >= 0; i-- {
		if b := p.idle[i].busy; b == nil || b.settled() {
			return i
		}
	}
	return -1
}

// take removes p.idle[i] from the idle queues and returns it, held once.
// Called with p.mu held.
func (p *queuePool) take(i int) *Queue {
	q := p.idle[i]
	p.idle = append(p.idle[:i], p.idle[i+1:]...)
	q.holders++
	if q.busy != nil {
		q.busy.Release()
		q.busy = nil
	}
	return q
}

// ReleaseQueue gives back a queue that AcquireQueue or
// AcquireQueueContext returned, for another goroutine to acquire; the
// caller must not use it afterwards, and the queue is no longer bound to
// the caller's ctx. A queue that is not the pool's, or that was released
// more often than acquired, is an error wrapping ErrInvalidArgument.
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
	defer p.mu.Unlock()
	if !q.pooled {
		return fmt.Errorf("release queue %d on %q: %w: not a queue of this context's pool", q.id, q.dev.Name, ErrInvalidArgument)
	}
	if q.holders == 0 {
		return fmt.Errorf("release queue %d on %q: %w: released more often than acquired", q.id, q.dev.Name, ErrInvalidArgument)
	}
	q.holders--
	if q.holders == 0 {
		if q.busy != nil {
			q.busy.Release()
		}
		q.busy = busy
		p.idle = append(p.idle, q)
	} else if busy != nil {
		busy.Release()
	}
	p.wakeLocked()
	return nil
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

// wakeLocked wakes AcquireQueueContext's waiters; called with p.mu held.
func (p *queuePool) wakeLocked() {
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
}

// wakeAll wakes AcquireQueueContext's waiters for Close, which they then
// see.
func (p *queuePool) wakeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakeLocked()
}
