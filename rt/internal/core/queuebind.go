package core

import (
	"context"
	"fmt"
	"sync"

	"github.com/dgen-go/dgen/rt/driver"
)

// Queues bound to a request's context (Context.AcquireQueueContext). A
// bound queue admits each command it enqueues (a kernel launch, a graph
// launch, a transfer or a fill): once the request's context is done it
// refuses it, and while Config.MaxQueueAhead of its commands may not yet
// have completed it waits for the oldest of them first, outside every
// lock, through a marker enqueued every half depth. So a request that
// enqueues 500 iterations and reads the result needs no pacing of its
// own, and when it is cancelled no more than the depth of its work is
// left on the device: CUDA and OpenCL cannot stop a running kernel, but
// rt stops handing them more.
//
// The plain launch path pays one load and one branch for it
// (Queue.bind, nil on a queue that no request's context binds).

// defaultQueueAhead is Config.MaxQueueAhead's default.
const defaultQueueAhead = 4

// queueBind is what binds a pooled queue to the context of the request
// that holds it alone, from AcquireQueueContext to ReleaseQueue.
type queueBind struct {
	ctx    context.Context
	depth  int // the most commands not known complete
	stride int // a marker after every stride commands

	mu    sync.Mutex // guards the fields below; never held across a driver call or a wait
	n     int        // the commands admitted since the queue was bound
	done  int        // every command up to done has completed
	marks []queueMark
	err   error // set once ctx is seen done: every later command fails with it
}

// queueMark is a marker that completes when the first n commands admitted
// on a bound queue have.
type queueMark struct {
	e *Event
	n int
}

// bindContext binds q, which the caller holds alone, to ctx. takeQueue
// calls it with the pool's mutex held, as it takes q, so that no
// AcquireQueue sees q unbound and shares it.
func (q *Queue) bindContext(ctx context.Context) {
	d := q.ctx.settings.queueAhead
	q.bind.Store(&queueBind{ctx: ctx, depth: d, stride: max(1, d/2)})
}

// canceled is the error of a command on q, bound by b, once b's context
// is done: it wraps ctx.Err(), and is kept for every later command.
// Called with b.mu held.
func (b *queueBind) canceled(q *Queue) error {
	if b.err == nil {
		b.err = fmt.Errorf("queue %d on %q: the context it was acquired for is done: %w", q.id, q.dev.Name, b.ctx.Err())
	}
	return b.err
}

// admit admits one command on q, bound by b: it fails at once when b's
// context, or ctx (a Context form's own, or nil), is done, and while depth
// commands are not known complete it waits for the oldest marker, which
// leaves room. It is called outside q's enter, so that its wait does not
// hold Close off, and holds no lock across the wait. The caller wraps its
// error with the command.
func (b *queueBind) admit(q *Queue, ctx context.Context) error {
	b.mu.Lock()
	for {
		if b.err != nil || b.ctx.Err() != nil {
			err := b.canceled(q)
			b.mu.Unlock()
			return err
		}
		if ctx != nil && ctx.Err() != nil {
			b.mu.Unlock()
			return ctx.Err()
		}
		if b.n-b.done < b.depth || len(b.marks) == 0 {
			b.n++
			b.mu.Unlock()
			return nil
		}
		m := b.marks[0]
		b.mu.Unlock()
		werr := b.wait(m.e, ctx)
		b.mu.Lock()
		if werr != nil {
			continue // a context is done: the loop says which
		}
		if len(b.marks) > 0 && b.marks[0] == m {
			b.marks = b.marks[1:]
			b.done = max(b.done, m.n)
			b.mu.Unlock()
			m.e.Release() // a driver call: not under mu
			b.mu.Lock()
		}
	}
}

// wait waits for e until it completes, or b's context or ctx (nil: none)
// is done, whichever comes first; the driver's wait, which cannot be
// stopped, goes on in e's goroutine (Event.background). A failed marker
// is the device's error, which the queue's next command reports: wait
// treats it as complete.
func (b *queueBind) wait(e *Event, ctx context.Context) error {
	if s, err := e.status(); err == nil && s == driver.StatusComplete {
		return nil
	}
	var cdone <-chan struct{}
	if ctx != nil {
		cdone = ctx.Done()
	}
	bg := e.background()
	select {
	case <-bg.done:
		return nil
	case <-b.ctx.Done():
		return b.ctx.Err()
	case <-cdone:
		return ctx.Err()
	}
}

// enqueued notes that a command that admit admitted has been enqueued on
// q, inside q's enter: after every stride commands it enqueues a marker,
// whose completion admit waits for once the queue is depth ahead.
func (b *queueBind) enqueued(q *Queue) {
	b.mu.Lock()
	n := b.n
	due := n%b.stride == 0 && (len(b.marks) == 0 || b.marks[len(b.marks)-1].n < n)
	b.mu.Unlock()
	if !due {
		return
	}
	ev, err := q.drv.Marker(nil)
	if err != nil {
		return // admit admits without a marker; the device's error comes with the next command
	}
	e := newEvent(q, ev, fmt.Sprintf("marker of queue %d's commands ahead", q.id))
	b.mu.Lock()
	b.marks = append(b.marks, queueMark{e: e, n: n})
	b.mu.Unlock()
}

// synchronised notes that every command admitted on the queue that b
// binds has completed: a blocking transfer has returned.
func (b *queueBind) synchronised() {
	b.mu.Lock()
	marks := b.marks
	b.marks, b.done = nil, b.n
	b.mu.Unlock()
	for _, m := range marks {
		m.e.Release()
	}
}

// unbind ends the binding of q, which its holder gives back, inside q's
// enter, and returns a marker of the work it may have left on the
// device, or nil when all of it is known complete.
func (b *queueBind) unbind(q *Queue) *Event {
	b.mu.Lock()
	marks, n, done := b.marks, b.n, b.done
	b.marks = nil
	b.mu.Unlock()
	var last *Event
	if k := len(marks); k > 0 && marks[k-1].n == n {
		last, marks = marks[k-1].e, marks[:k-1]
	}
	for _, m := range marks {
		m.e.Release()
	}
	if last == nil && n != done {
		ev, err := q.drv.Marker(nil)
		if err != nil {
			return nil
		}
		last = newEvent(q, ev, fmt.Sprintf("marker of queue %d's last request", q.id))
	}
	if last != nil {
		last.background() // settled says when it has completed
	}
	return last
}

// admitCommand admits a command on q, outside q's enter, with ctx a
// Context form's own (or nil), and returns the binding of q, to be told
// once the command is enqueued (queueBind.enqueued), or nil. The caller
// wraps its error with the command.
func (q *Queue) admitCommand(ctx context.Context) (*queueBind, error) {
	if q == nil {
		return nil, nil // enter reports it
	}
	b := q.binding()
	if b == nil {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	return b, b.admit(q, ctx)
}

// bound returns the binding of q, or nil: what the launch path, which
// cannot afford admitCommand's call, checks with two loads and a branch
// before it calls admit. A nil q is enter's to report.
func (q *Queue) bound() *queueBind {
	if q == nil {
		return nil
	}
	return q.binding()
}

// binding returns the binding of q, or of the queue that q is a view of
// (Queue.WithSpec): a view's commands are its queue's, admitted as its
// queue's are.
func (q *Queue) binding() *queueBind {
	if q.base != nil {
		q = q.base
	}
	return q.bind.Load()
}

// boundContext returns the context that binds q, or nil.
func (q *Queue) boundContext() context.Context {
	if q == nil {
		return nil
	}
	if b := q.binding(); b != nil {
		return b.ctx
	}
	return nil
}

// settled reports, without a driver call, whether the background wait of
// e (Event.background) has ended: the command has completed or failed.
func (e *Event) settled() bool {
	e.mu.Lock()
	bg := e.bg
	e.mu.Unlock()
	if bg == nil {
		return false
	}
	select {
	case <-bg.done:
		return true
	default:
		return false
	}
}
