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
// The pool serves each priority (priority.go) apart, with up to max
// queues of its own: AcquireQueueConfig hands out only queues made at the
// priority it is asked for, and shares only those.

// queuePool is a context's pool of queues on its first device.
type queuePool struct {
	max int // the most queues the pool makes at each priority; set at Open

	mu     sync.Mutex              // guards the fields below; never held across a driver call
	queues []*Queue                // every queue of the pool, in the order made
	idle   [numPriorities][]*Queue // the queues that no goroutine holds, by the priority asked of them
	making [numPriorities]int      // queues being made, outside mu, by priority
}

// AcquireQueue returns a queue of the pool: an idle one, else a new one
// while the pool has fewer than max (or none yet), else the one that the
// fewest goroutines hold. ReleaseQueue gives it back.
func (c *Context) AcquireQueue() (*Queue, error) { return c.AcquireQueueConfig(QueueConfig{}) }

// AcquireQueueConfig is AcquireQueue for a queue made with cfg: the pool
// of cfg.Priority's queues serves it. A priority that is not one of rt's
// is an error wrapping ErrInvalidArgument.
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
	if n := len(p.idle[prio]); n > 0 {
		q := p.idle[prio][n-1]
		p.idle[prio] = p.idle[prio][:n-1]
		q.holders++
		p.mu.Unlock()
		return q, nil
	}
	least, n := p.leastHeld(prio)
	if n+p.making[prio] < p.max || n == 0 {
		p.making[prio]++
		p.mu.Unlock()
		q, err := c.NewQueueConfig(c.devices[0], cfg)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making[prio]--
		if err != nil {
			return nil, fmt.Errorf("acquire queue: %w", err)
		}
		q.pooled, q.holders = true, 1
		p.queues = append(p.queues, q)
		return q, nil
	}
	defer p.mu.Unlock()
	least.holders++
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
		if n++; least == nil || q.holders < least.holders {
			least = q
		}
	}
	return least, n
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
		p.idle[q.asked] = append(p.idle[q.asked], q)
	}
	return nil
}
