package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// paramGraph is a graph recorded once with parameters: y = 7 (a Fill),
// y = a*x + 1 (a launch), z = y (a CopyTo), over the buffer parameters x,
// y, z and the value parameter a.
type paramGraph struct {
	*graphFixture
	g       *rt.Graph
	x, y, z *rt.GraphBuffer[float32]
	a       *rt.GraphValue[float32]
}

func newParamGraph(t testing.TB, ctx *rt.Context) *paramGraph {
	t.Helper()
	p, node, z := recordParamGraph(t, ctx)
	var err error
	if p.a, err = rt.ValueParam[float32](node, 2); err != nil {
		t.Fatal(err)
	}
	// The graph no longer uses the buffers it recorded.
	if err := errors.Join(p.graphFixture.x.Free(), p.graphFixture.y.Free(), z.Free()); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordParamGraph records newParamGraph's graph with its buffer
// parameters and no value parameter; it returns the step's node, from
// which the caller makes that, and the buffer z that the graph recorded
// as its output.
func recordParamGraph(t testing.TB, ctx *rt.Context) (p *paramGraph, node *rt.GraphNode, z rt.Buffer[float32]) {
	t.Helper()
	f := newGraphFixture(t, ctx)
	z, err := rt.NewBuffer[float32](ctx, f.n)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.q.Record("params", func(q *rt.Queue) error {
		if err := f.y.Fill(q, 7); err != nil {
			return err
		}
		var err error
		if node, err = q.Node(func(q *rt.Queue) error { return f.step(q, f.x, f.y, 2, 1) }); err != nil {
			return err
		}
		return f.y.CopyTo(q, z)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Release() })
	p = &paramGraph{graphFixture: f, g: g}
	if p.x, err = rt.BufferParam(g, f.x); err != nil {
		t.Fatal(err)
	}
	if p.y, err = rt.BufferParam(g, f.y); err != nil {
		t.Fatal(err)
	}
	if p.z, err = rt.BufferParam(g, z); err != nil {
		t.Fatal(err)
	}
	return p, node, z
}

// request is one launch's buffers: its input and what it expects.
type request struct {
	x, y, z rt.Buffer[float32]
	in      []float32
}

func newRequest(t testing.TB, ctx *rt.Context, q *rt.Queue, n int, seed float32) *request {
	r := &request{in: make([]float32, n)}
	for i := range r.in {
		r.in[i] = seed + float32(i%97)*0.25
	}
	var err error
	for _, b := range []*rt.Buffer[float32]{&r.x, &r.y, &r.z} {
		if *b, err = rt.NewBuffer[float32](ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.x.Write(q, r.in); err != nil {
		t.Fatal(err)
	}
	return r
}

func (p *paramGraph) bind(r *request, a float32) []rt.Binding {
	return []rt.Binding{p.x.Bind(r.x), p.y.Bind(r.y), p.z.Bind(r.z), p.a.Bind(a)}
}

// check reads r's y and z on q and compares them with a*x + 1.
func (r *request) check(q *rt.Queue, a float32) error {
	for _, b := range []rt.Buffer[float32]{r.y, r.z} {
		got := make([]float32, len(r.in))
		if err := b.Read(q, got); err != nil {
			return err
		}
		for i, v := range got {
			if want := a*r.in[i] + 1; v != want {
				return fmt.Errorf("element %d = %v, want %v (a = %v)", i, v, want, a)
			}
		}
	}
	return nil
}

// TestGraphParams launches one graph with several bindings of its buffer
// and value parameters, as a command buffer and as a loop, and checks
// each launch's results.
func TestGraphParams(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			p := newParamGraph(t, openCPU(t))
			checkNative(t, p.ctx, p.g, mode)
			reqs := []*request{newRequest(t, p.ctx, p.q, p.n, 1), newRequest(t, p.ctx, p.q, p.n, -40)}
			// Alternate the bindings, and repeat one, so that launches
			// both change and keep what the last one bound.
			for i, tc := range []struct {
				r int
				a float32
			}{{0, 2}, {1, 3}, {1, 3}, {0, -0.5}, {1, 10}} {
				r := reqs[tc.r]
				if err := p.g.LaunchWith(p.q, p.bind(r, tc.a)); err != nil {
					t.Fatalf("launch %d: %v", i, err)
				}
				if err := r.check(p.q, tc.a); err != nil {
					t.Fatalf("launch %d: %v", i, err)
				}
			}
		})
	}
}

// TestGraphParamsConcurrent launches one graph from 16 goroutines, each
// on a queue of its own with buffers and values of its own, and checks
// every result.
func TestGraphParamsConcurrent(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			p := newParamGraph(t, openCPU(t))
			const workers, launches = 16, 6
			var wg sync.WaitGroup
			errs := make([]error, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					q, err := p.ctx.NewQueue(p.q.Device())
					if err != nil {
						errs[w] = err
						return
					}
					r := newRequest(t, p.ctx, q, p.n, float32(w*10))
					for i := range launches {
						// Pairs of launches bind the same, while other
						// goroutines bind the graph's kernel objects to theirs.
						a := float32(w) + float32(i/2)/8
						if err := p.g.LaunchWith(q, p.bind(r, a)); err != nil {
							errs[w] = err
							return
						}
						if err := r.check(q, a); err != nil {
							errs[w] = fmt.Errorf("launch %d: %w", i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			for w, err := range errs {
				if err != nil {
					t.Errorf("goroutine %d: %v", w, err)
				}
			}
		})
	}
}

// TestGraphParamsMisuse checks that bindings that do not fit fail with
// ErrInvalidArgument (ErrFreed for a freed buffer) before anything runs.
func TestGraphParamsMisuse(t *testing.T) {
	p := newParamGraph(t, openCPU(t))
	r := newRequest(t, p.ctx, p.q, p.n, 1)
	if err := r.y.Write(p.q, make([]float32, p.n)); err != nil {
		t.Fatal(err)
	}
	short, err := rt.NewBuffer[float32](p.ctx, p.n-1)
	if err != nil {
		t.Fatal(err)
	}
	freed := newRequest(t, p.ctx, p.q, p.n, 1).x
	freed.Free()
	other := newParamGraph(t, p.ctx)
	ok := p.bind(r, 2)
	with := func(i int, b rt.Binding) []rt.Binding {
		bs := append([]rt.Binding(nil), ok...)
		bs[i] = b
		return bs
	}
	for _, tc := range []struct {
		name string
		bind []rt.Binding
		is   error
	}{
		{"missing", ok[:3], rt.ErrInvalidArgument},
		{"none", nil, rt.ErrInvalidArgument},
		{"twice", append(ok[:3:3], p.x.Bind(r.x)), rt.ErrInvalidArgument},
		{"zero", with(3, rt.Binding{}), rt.ErrInvalidArgument},
		{"wrong length", with(0, p.x.Bind(short)), rt.ErrInvalidArgument},
		{"other graph", with(3, other.a.Bind(2)), rt.ErrInvalidArgument},
		{"freed", with(0, p.x.Bind(freed)), rt.ErrFreed},
		{"copy overlap", with(2, p.z.Bind(r.y)), rt.ErrInvalidArgument},
	} {
		if err := p.g.LaunchWith(p.q, tc.bind); !errors.Is(err, tc.is) {
			t.Errorf("%s: LaunchWith: %v, want %v", tc.name, err, tc.is)
		}
	}
	if err := p.g.Launch(p.q); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("Launch of a graph with parameters: %v, want ErrInvalidArgument", err)
	}
	// Nothing ran: y was never written.
	got := make([]float32, p.n)
	if err := r.y.Read(p.q, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 0 {
			t.Fatalf("a refused launch ran: y[%d] = %v", i, v)
		}
	}

	// Parameters that do not fit the graph.
	f := newGraphFixture(t, p.ctx)
	var fill, step *rt.GraphNode
	g, err := f.q.Record("misuse", func(q *rt.Queue) error {
		var err error
		if fill, err = q.Node(func(q *rt.Queue) error { return f.y.Fill(q, 1) }); err != nil {
			return err
		}
		step, err = q.Node(func(q *rt.Queue) error { return f.step(q, f.y, f.y, 2, 1) })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if _, err := rt.BufferParam(g, f.x); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("BufferParam of a buffer the graph does not use: %v", err)
	}
	if _, err := rt.BufferParam(g, f.y); err != nil {
		t.Errorf("BufferParam: %v", err)
	}
	if _, err := rt.BufferParam(g, f.y); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("BufferParam twice: %v", err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"of a fill", func() error { _, err := rt.ValueParam[float32](fill, 0); return err }()},
		{"of a buffer argument", func() error { _, err := rt.ValueParam[float32](step, 0); return err }()},
		{"of another size", func() error { _, err := rt.ValueParam[float64](step, 2); return err }()},
		{"out of range", func() error { _, err := rt.ValueParam[float32](step, 5); return err }()},
	} {
		if !errors.Is(tc.err, rt.ErrInvalidArgument) {
			t.Errorf("ValueParam %s: %v, want ErrInvalidArgument", tc.name, tc.err)
		}
	}
	if _, err := rt.ValueParam[int32](step, 4); err != nil {
		t.Errorf("ValueParam: %v", err)
	}
	if _, err := rt.ValueParam[int32](step, 4); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("ValueParam twice: %v", err)
	}
}

// BenchmarkGraphParams compares a launch of the parameterised graph, two
// requests' bindings in turn, with the plain commands it replaces.
func BenchmarkGraphParams(b *testing.B) {
	for _, mode := range []string{"plain", "command-buffer", "loop"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "loop" {
				loopGraphs(b)
			}
			p := newParamGraph(b, openCPU(b))
			f := p.graphFixture
			reqs := []*request{newRequest(b, p.ctx, f.q, f.n, 1), newRequest(b, p.ctx, f.q, f.n, 2)}
			launch := func(r *request, a float32) error { return p.g.LaunchWith(f.q, p.bind(r, a)) }
			if mode == "plain" {
				launch = func(r *request, a float32) error {
					if err := r.y.Fill(f.q, 7); err != nil {
						return err
					}
					if err := f.step(f.q, r.x, r.y, a, 1); err != nil {
						return err
					}
					return r.y.CopyTo(f.q, r.z)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				if err := launch(reqs[i%2], 2); err != nil {
					b.Fatal(err)
				}
				if i%64 == 63 {
					f.q.Finish()
				}
			}
			f.q.Finish()
		})
	}
}
