package rt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// TestQueueWithSpec: the values of a queue's view reach every launch on it
// that gives none of its own, whatever the kernel spec; a launch's own
// value comes first, the context's last; the same values give the same
// view; a variant built ahead with the view's values builds nothing at the
// view's first launch.
func TestQueueWithSpec(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	out := lsBuffer(t, ctx)
	if err := lsBias.Set(ctx, 3); err != nil {
		t.Fatal(err)
	}
	v, err := q.WithSpec(lsScale.Of(6))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := q.WithSpec(lsScale.Of(6)); err != nil || again != v {
		t.Errorf("WithSpec of the same values = %p, %v; want the view %p", again, err, v)
	}
	if same, err := v.WithSpec(); err != nil || same != v {
		t.Errorf("WithSpec of no values = %p, %v; want the view itself", same, err)
	}
	both, err := v.WithSpec(lsBias.Of(5))
	if err != nil {
		t.Fatal(err)
	}
	plain := func(q *rt.Queue) (int32, int32, error) {
		if err := (&lsPlain{Out: out}).Enqueue(q, rt.Range1(lsN)); err != nil {
			return 0, 0, err
		}
		return lsRead(q, out)
	}
	tests := []struct {
		name              string
		run               func() (int32, int32, error)
		wantScale, wantBs int32
	}{
		{"a spec without the field, on the view", func() (int32, int32, error) { return plain(v) }, 6, 3},
		{"a spec with the field zero, on the view", func() (int32, int32, error) { return lsRun(v, out, rt.Spec[int32]{}) }, 6, 3},
		{"the launch's own value, on the view", func() (int32, int32, error) { return lsRun(v, out, lsScale.Of(9)) }, 9, 3},
		{"the context's, on the queue", func() (int32, int32, error) { return plain(q) }, 1, 3},
		{"a view of the view", func() (int32, int32, error) { return plain(both) }, 6, 5},
	}
	for _, tt := range tests {
		scale, bias, err := tt.run()
		if err != nil || scale != tt.wantScale || bias != tt.wantBs {
			t.Errorf("%s: LSCALE=%d LBIAS=%d (%v); want %d and %d", tt.name, scale, bias, err, tt.wantScale, tt.wantBs)
		}
	}
	// The context's values change; the view's do not.
	if err := lsScale.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if scale, _, err := plain(v); err != nil || scale != 6 {
		t.Errorf("after Set(2), the view's launch ran with LSCALE=%d (%v); want 6", scale, err)
	}
	// Built ahead with the view's values, a variant builds nothing at its
	// first launch on a view.
	if err := rt.BuildVariant(context.Background(), ctx, lsScale.Of(12), lsBias.Of(4)); err != nil {
		t.Fatal(err)
	}
	ahead := ctx.Stats().Cache
	v12, err := q.WithSpec(lsScale.Of(12), lsBias.Of(4))
	if err != nil {
		t.Fatal(err)
	}
	if scale, bias, err := plain(v12); err != nil || scale != 12 || bias != 4 {
		t.Errorf("the view of a variant built ahead ran with LSCALE=%d LBIAS=%d (%v); want 12 and 4", scale, bias, err)
	}
	if s := ctx.Stats().Cache; s.Builds != ahead.Builds || s.DiskHits != ahead.DiskHits {
		t.Errorf("the first launch on the view built %d and loaded %d programs; want none", s.Builds-ahead.Builds, s.DiskHits-ahead.DiskHits)
	}
}

// TestQueueWithSpecMistakes: values that no launch could use are refused
// when the view is made.
func TestQueueWithSpecMistakes(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	var nq *rt.Queue
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"a value above the maximum", func() error { _, err := q.WithSpec(lsScale.Of(101)); return err }, rt.ErrOutOfRange},
		{"the zero Spec", func() error { _, err := q.WithSpec(rt.Spec[int32]{}); return err }, rt.ErrInvalidArgument},
		{"two values of one constant", func() error { _, err := q.WithSpec(lsScale.Of(2), lsScale.Of(3)); return err }, rt.ErrInvalidArgument},
		{"a nil queue", func() error { _, err := nq.WithSpec(lsScale.Of(2)); return err }, rt.ErrInvalidArgument},
		{"releasing a view to the pool", func() error {
			pq, err := ctx.AcquireQueue()
			if err != nil {
				return err
			}
			defer ctx.ReleaseQueue(pq)
			v, err := pq.WithSpec(lsScale.Of(2))
			if err != nil {
				return err
			}
			return ctx.ReleaseQueue(v)
		}, rt.ErrInvalidArgument},
	}
	for _, tt := range tests {
		if err := tt.call(); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v; want an error wrapping %v", tt.name, err, tt.want)
		}
	}
}

// TestQueueWithSpecRecordAndBind: a view is its queue with values, in
// what it records and in what binds it. A graph recorded on a view keeps
// the view's values, and a view of a queue bound to a request's context
// refuses its commands once the context is done, as the queue does.
func TestQueueWithSpecRecordAndBind(t *testing.T) {
	ctx := openCPU(t)
	out := lsBuffer(t, ctx)
	v, err := ctx.Queue().WithSpec(lsScale.Of(6))
	if err != nil {
		t.Fatal(err)
	}
	g, err := v.Record("view", func(q *rt.Queue) error { return (&lsPlain{Out: out}).Enqueue(q, rt.Range1(lsN)) })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if err := g.Launch(ctx.Queue()); err != nil {
		t.Fatal(err)
	}
	if scale, _, err := lsRead(ctx.Queue(), out); err != nil || scale != 6 {
		t.Errorf("the graph recorded on the view ran with LSCALE=%d (%v); want the view's 6", scale, err)
	}

	rctx, cancel := context.WithCancel(context.Background())
	q, err := ctx.AcquireQueueContext(rctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.ReleaseQueue(q)
	bv, err := q.WithSpec(lsScale.Of(7))
	if err != nil {
		t.Fatal(err)
	}
	if scale, _, err := (func() (int32, int32, error) {
		if err := (&lsPlain{Out: out}).Enqueue(bv, rt.Range1(lsN)); err != nil {
			return 0, 0, err
		}
		return lsRead(bv, out)
	})(); err != nil || scale != 7 {
		t.Fatalf("the view of a bound queue ran with LSCALE=%d (%v); want 7", scale, err)
	}
	cancel()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"a launch", func() error { return (&lsPlain{Out: out}).Enqueue(bv, rt.Range1(lsN)) }},
		{"a graph launch", func() error { return g.Launch(bv) }},
		{"a fill", func() error { return out.Fill(bv, 0) }},
		{"a read", func() error { return out.Read(bv, make([]int32, lsN)) }},
	} {
		if err := tc.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s on the view of a queue whose request is cancelled: %v; want an error wrapping context.Canceled", tc.name, err)
		}
	}
}
