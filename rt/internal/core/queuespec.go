package core

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// Specialization-constant values of a queue (Queue.WithSpec): the values
// that a request gives once for all of its launches, so that neither every
// kernel spec of a program nor every launch repeats them. A launch takes
// each value from the first of: its own (a spec's field, speclaunch.go),
// its queue's, the context's.
//
// WithSpec returns a view of the queue: a Queue over the same driver queue,
// gate, device and trace handle, in order with every other command of the
// queue, whose launches run with the view's values where they give none of
// their own. The view has kernel instance slots of its own, so that its
// launches cost what a plain queue's cost after the first; views are
// interned on the queue they are made from (one per set of values), as the
// program cache interns its sets of values, so that a request that asks
// for the same values again gets the same view and its parked instances,
// and the views of a queue are bounded by the variants it serves.

// queueSpec is what a view gives its launches: the values, sorted by name,
// as the program cache takes them.
type queueSpec struct {
	vals []progcache.SpecValue
}

// queueViews are the views of a queue, by the encoding of their values.
type queueViews struct {
	mu sync.Mutex // guards m; never held across a driver call
	m  map[string]*Queue
}

// WithSpec returns a view of q whose launches run with values
// (SpecConst.Of) wherever they give no value of their own: the constants
// that every launch of a request depends on, given once for the request
// rather than in every kernel spec of the program and at every launch.
// A launch takes each specialization-constant value from the first of its
// own (a kernel spec's Spec field), its queue's (WithSpec), and its
// context's (SpecConst.Set, else the default); a constant that the
// launch's program does not use is ignored. The context's values may
// change while the request runs; the view's never do.
//
// The view is a queue over q's commands, in order with them: enqueue,
// transfer and finish on either. It is one per set of values (the same
// values give the same view), parks kernel instances of its own, and
// lives as long as q; give back to the pool (Context.ReleaseQueue) the
// queue that AcquireQueue returned, not a view of it. A view of a queue
// that AcquireQueueContext bound to a request is bound as the queue is,
// and a graph recorded on a view (Queue.Record) keeps the view's values.
// A view of a view has the values of both, the later in place of the
// earlier. A zero Spec or two values of one constant is an error wrapping
// ErrInvalidArgument, a value outside its constant's bounds one wrapping
// ErrOutOfRange; a queue that records a graph, or that SpecConst.Tune
// passed its function, has no views (ErrInvalidArgument).
func (q *Queue) WithSpec(values ...SpecValue) (*Queue, error) {
	if q == nil {
		return nil, fmt.Errorf("queue with specialization constants: %w: nil queue", ErrInvalidArgument)
	}
	if q.rec.Load() != nil {
		return nil, fmt.Errorf("queue with specialization constants: %w: the queue records a graph", ErrInvalidArgument)
	}
	if q.tune != nil {
		return nil, fmt.Errorf("queue with specialization constants: %w: the queue is SpecConst.Tune's", ErrInvalidArgument)
	}
	_, over, err := specValuesOf(values)
	if err != nil {
		return nil, fmt.Errorf("queue with specialization constants: %w", err)
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("queue with specialization constants: %w", err)
	}
	defer q.exit()
	if len(over) == 0 {
		return q, nil
	}
	base := q
	var vals []progcache.SpecValue
	if q.spec != nil {
		base = q.base
		vals = q.spec.vals
	}
	vals = progcache.Overlay(vals, over)
	var key strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&key, "%d:%s=%s;", len(v.Name), v.Name, v.Value)
	}
	vs := &base.views
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if v, ok := vs.m[key.String()]; ok {
		return v, nil
	}
	if vs.m == nil {
		vs.m = make(map[string]*Queue)
	}
	v := &Queue{ctx: base.ctx, gate: base.gate, dev: base.dev, tq: base.tq, launcher: base.launcher, drv: base.drv, profiling: base.profiling,
		lateTimes: base.lateTimes, timer: base.timer, id: base.id, base: base, spec: &queueSpec{vals: vals}}
	vs.m[key.String()] = v
	return v, nil
}

// viewsOf returns the views of q, for Close and the suspects of a fault.
func (q *Queue) viewsOf() []*Queue {
	vs := &q.views
	vs.mu.Lock()
	defer vs.mu.Unlock()
	out := make([]*Queue, 0, len(vs.m))
	for _, v := range vs.m {
		out = append(out, v)
	}
	return out
}

// withQueueSpec returns over, a launch's own values, after the values of
// q's view that the launch does not give: the launch's own come last, so
// that they take the place of the queue's.
func (q *Queue) withQueueSpec(over []progcache.SpecValue) []progcache.SpecValue {
	if q.spec == nil {
		return over
	}
	out := make([]progcache.SpecValue, 0, len(q.spec.vals)+len(over))
	for _, v := range q.spec.vals {
		if !slices.ContainsFunc(over, func(o progcache.SpecValue) bool { return o.Name == v.Name }) {
			out = append(out, v)
		}
	}
	return append(out, over...)
}
