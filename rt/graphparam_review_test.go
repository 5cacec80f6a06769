package rt_test

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// TestGraphParamAfterLaunch adds a parameter to a graph that launched
// with parameters already, on a queue it is prepared for: the next launch
// binds the new one too, and uses its value.
func TestGraphParamAfterLaunch(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			ctx := openCPU(t)
			f := newGraphFixture(t, ctx)
			z, err := rt.NewBuffer[float32](ctx, f.n)
			if err != nil {
				t.Fatal(err)
			}
			var node *rt.GraphNode
			g, err := f.q.Record("late", func(q *rt.Queue) error {
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
			defer g.Release()
			p := &paramGraph{graphFixture: f, g: g}
			if p.x, err = rt.BufferParam(g, f.x); err != nil {
				t.Fatal(err)
			}
			if p.y, err = rt.BufferParam(g, f.y); err != nil {
				t.Fatal(err)
			}
			if p.z, err = rt.BufferParam(g, z); err != nil {
				t.Fatal(err)
			}
			r := newRequest(t, ctx, f.q, f.n, 1)
			three := []rt.Binding{p.x.Bind(r.x), p.y.Bind(r.y), p.z.Bind(r.z)}
			if err := g.LaunchWith(f.q, three); err != nil {
				t.Fatal(err)
			}
			if err := r.check(f.q, 2); err != nil {
				t.Fatal(err)
			}
			if p.a, err = rt.ValueParam[float32](node, 2); err != nil {
				t.Fatal(err)
			}
			if err := g.LaunchWith(f.q, three); !errors.Is(err, rt.ErrInvalidArgument) {
				t.Fatalf("LaunchWith without the new parameter: %v, want ErrInvalidArgument", err)
			}
			if err := g.LaunchWith(f.q, p.bind(r, 5)); err != nil {
				t.Fatal(err)
			}
			if err := r.check(f.q, 5); err != nil {
				t.Fatal(err)
			}
		})
	}
}
