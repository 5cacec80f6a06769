package core

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
)

// Use recording for stream-ordered reuse (see the rt/alloc package
// documentation).
//
// Every queue counts the commands that use allocator memory: a command takes
// its point, the next count, after it has been enqueued, and records it in
// the useLog of every allocator buffer it uses. A blocking transfer or Finish
// reads the count before it starts and, once it returns, marks every point up
// to that count complete: the queue is in order, and a command whose point
// was taken before the count was read was enqueued before the transfer. When
// the buffer is freed, its log goes to the allocator as the block's last
// uses; an allocation on another queue that reuses the block waits for the
// ones not yet known complete.
//
// A context with one queue keeps no log (Context.multiQueue is false): every
// reuse is on the queue of every use, so the allocator's hit-and-free path
// costs no use recording. Creating the second queue makes a point on the
// first, which covers every use that went unrecorded, a barrier of every
// allocator (Context.startMultiQueue), without waiting for it.
//
// A released queue (Queue.Release) has completed every point: its uses
// are dropped from a buffer's log when another queue's use joins it, and
// from a block's when the buffer is freed, so that neither keeps a queue
// that is gone.

// queuePoints are a queue's use counters.
type queuePoints struct {
	enq  atomic.Uint64 // points taken: commands enqueued that use allocator memory
	done atomic.Uint64 // every point up to done has completed
}

// point returns the point of a command that has just been enqueued.
func (p *queuePoints) point() uint64 { return p.enq.Add(1) }

// complete marks every point up to n complete.
func (p *queuePoints) complete(n uint64) { storeMax(&p.done, n) }

// storeMax sets v to n if n is larger.
func storeMax(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// useLog records where a buffer of the allocator has been used: the latest
// point on the first queue that used it, without a lock, and the latest
// point on each other queue, under a mutex, in more.
type useLog struct {
	q    atomic.Pointer[Queue]
	pt   atomic.Uint64
	more atomic.Pointer[moreUses]
}

// moreUses are a buffer's uses on queues other than its first.
type moreUses struct {
	mu   sync.Mutex
	uses []alloc.Use
}

// record notes a use of the buffer on q at point p.
func (l *useLog) record(q *Queue, p uint64) {
	first := l.q.Load()
	if first == nil && !l.q.CompareAndSwap(nil, q) {
		first = l.q.Load() // another goroutine's queue came first
	}
	if first == nil || first == q {
		storeMax(&l.pt, p)
		return
	}
	m := l.more.Load()
	if m == nil {
		l.more.CompareAndSwap(nil, &moreUses{})
		m = l.more.Load()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.uses {
		if m.uses[i].Queue == alloc.Queue(q) {
			m.uses[i].Point = max(m.uses[i].Point, p)
			return
		}
	}
	// The uses known complete go before a new queue's joins them: a
	// buffer that short-lived queues use in turn (each released after its
	// work, Queue.Release) keeps the uses of the queues still working.
	m.uses = slices.DeleteFunc(m.uses, useComplete)
	m.uses = append(m.uses, alloc.Use{Queue: q, Point: p})
}

// useComplete reports whether every command of u's queue up to u's point
// is known to have completed.
func useComplete(u alloc.Use) bool {
	return u.Queue.(*Queue).pts.done.Load() >= u.Point
}

// appendTo appends the recorded uses to dst.
func (l *useLog) appendTo(dst []alloc.Use) []alloc.Use {
	q := l.q.Load()
	if q == nil {
		return dst
	}
	dst = append(dst, alloc.Use{Queue: q, Point: l.pt.Load()})
	if m := l.more.Load(); m != nil {
		m.mu.Lock()
		dst = append(dst, m.uses...)
		m.mu.Unlock()
	}
	return dst
}

// used records a use of m, if it is allocator memory, by the command of
// point p on q; the use of a view is a use of its parent.
func (m *Mem) used(q *Queue, p uint64) {
	if m != nil && m.parent != nil {
		m = m.parent
	}
	if m != nil && m.pooled {
		m.uses.record(q, p)
	}
}

// record records the use of ms by the command just enqueued on q. A
// context with one queue records nothing: reuse on the queue that used a
// block is free, and NewQueue sets the first queue's barrier before a
// second one can reuse anything.
func (q *Queue) record(ms ...*Mem) {
	if !q.ctx.queues.multi.Load() {
		return
	}
	p := q.pts.point()
	for _, m := range ms {
		m.used(q, p)
	}
}

// recordArgs records the use of k's buffer arguments by the command just
// enqueued on q.
func (q *Queue) recordArgs(k *kernelObject) {
	if k.pooledArgs == 0 || !q.ctx.queues.multi.Load() {
		return
	}
	p := q.pts.point()
	for _, i := range k.bufArgs {
		k.bufs[i].used(q, p)
	}
}

// Completed implements alloc.Device: whether every command of u's queue up
// to u's point is known to have completed.
func (d *devAlloc) Completed(u alloc.Use) bool { return useComplete(u) }

// Order implements alloc.Device. For each use it enqueues a marker on the
// use's queue, which completes when every command enqueued there so far has
// (the use's point among them); then a marker on q that waits for those
// markers. q is in order, so the commands enqueued on it afterwards start
// only when that marker has completed. Nothing blocks the host, except for
// the nil queue (the host), for which Order waits for the markers.
func (d *devAlloc) Order(q alloc.Queue, uses []alloc.Use) (err error) {
	evs := make([]driver.Event, 0, len(uses))
	defer func() {
		for _, ev := range evs {
			ev.Release()
		}
	}()
	for _, u := range uses {
		from := u.Queue.(*Queue)
		if !from.hold() {
			continue // released: its commands have completed
		}
		ev, err := from.drv.Marker(nil)
		if err == nil {
			evs = append(evs, ev)
			// OpenCL guarantees a wait on another queue's event only
			// once that queue has been flushed.
			if err = from.drv.Flush(); err != nil {
				err = fmt.Errorf("order reuse after use on queue %d of %q: flush: %w", from.id, from.dev.Name, err)
			}
		} else {
			err = fmt.Errorf("order reuse after use on queue %d of %q: marker: %w", from.id, from.dev.Name, err)
		}
		from.exit()
		if err != nil {
			return err
		}
	}
	if len(evs) == 0 {
		return nil
	}
	to, _ := q.(*Queue)
	if to == nil {
		for _, ev := range evs {
			if err := ev.Wait(); err != nil {
				return fmt.Errorf("wait for a use on another queue: %w", err)
			}
		}
		return nil
	}
	ev, err := to.drv.Marker(evs)
	if err != nil {
		return fmt.Errorf("order reuse on queue %d of %q: marker: %w", to.id, to.dev.Name, err)
	}
	ev.Release()
	return nil
}
