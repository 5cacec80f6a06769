package main

import (
	"os"
	"time"

	"github.com/dgen-go/dgen/rt"
)

// grid is the state of rt's two loops: the chip's power and two
// temperature buffers, with the values and constants of rawcl's loop.
type grid struct {
	ctx       *rt.Context
	q         *rt.Queue
	power     rt.Buffer[float32]
	in, spare rt.Buffer[float32]
	pair      rt.Buffer[float32] // graphLoop's input and output
	size      int
}

// openGrid opens an rt context on backend (and the device DGEN_DEVICE
// selects) and sets up the grid on its default queue.
func openGrid(backend string, size int) (*grid, error) {
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.Backend = rt.Backend(backend)
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return nil, err
	}
	g := &grid{ctx: ctx, q: ctx.Queue(), size: size}
	host := initialTemps(size)
	for _, b := range []*rt.Buffer[float32]{&g.power, &g.in, &g.spare, &g.pair} {
		if *b, err = rt.NewBuffer[float32](ctx, len(host)); err == nil {
			err = b.Write(g.q, host)
		}
		if err != nil {
			g.close()
			return nil, err
		}
	}
	return g, nil
}

// close frees the grid's buffers and closes its context.
func (g *grid) close() {
	for _, b := range []rt.Buffer[float32]{g.power, g.in, g.spare, g.pair} {
		if b.Len() > 0 {
			b.Free()
		}
	}
	g.ctx.Close()
}

// spec returns the launch with every argument set but the step count and
// the buffers, and its range: 16×16 groups, one border cell (pyramid 1).
func (g *grid) spec() (Step, rt.Range) {
	const block, small = 16, 14
	n := (g.size + small - 1) / small * block
	return Step{Power: g.power, Cols: int32(g.size), Rows: int32(g.size), BorderCols: 1, BorderRows: 1,
		Cap: 1, Rx: 1, Ry: 1, Rz: 1, Dt: 0.001}, rt.Range2(n, n).WithLocal(block, block)
}

// swapLoop launches through the generated Enqueue, two buffers swapped.
type swapLoop struct{ g *grid }

func (l swapLoop) steps(n int) (float64, error) {
	g := l.g
	st, r := g.spec()
	start := time.Now()
	for range n {
		st.Iteration, st.TempSrc, st.TempDst = 1, g.in, g.spare
		if err := st.Enqueue(g.q, r); err != nil {
			return 0, err
		}
		g.in, g.spare = g.spare, g.in
	}
	enqueued(start, n)
	err := g.q.Finish()
	return perStep(start, n), err
}

// taggedLoop takes each step's output from tempSite and frees its input
// once the launch is enqueued, as examples/stencil's tagged mode does.
type taggedLoop struct{ g *grid }

func (l taggedLoop) steps(n int) (float64, error) {
	g := l.g
	st, r := g.spec()
	start := time.Now()
	for range n {
		out, err := tempSite.Alloc(g.q, g.size*g.size)
		if err != nil {
			return 0, err
		}
		st.Iteration, st.TempSrc, st.TempDst = 1, g.in, out
		if err := st.Enqueue(g.q, r); err != nil {
			return 0, err
		}
		if err := g.in.Free(); err != nil {
			return 0, err
		}
		g.in = out
	}
	enqueued(start, n)
	err := g.q.Finish()
	return perStep(start, n), err
}

// globalRW writes Word and reads it back.
type globalRW struct{ q *rt.Queue }

func (l globalRW) steps(n int) (float64, error) {
	start := time.Now()
	for range n {
		if err := Word.Write(l.q, 1); err != nil {
			return 0, err
		}
		if _, err := Word.Read(l.q); err != nil {
			return 0, err
		}
	}
	return perStep(start, n), nil
}

// graphLoop replays a command graph of two steps, from the grid's pair
// buffer to a scratch buffer from tempSite and back, as examples/stencil
// -graph does: the graph owns the scratch buffer, so a replay allocates
// nothing. (Not from in: tagged mode frees that.)
type graphLoop struct {
	g  *grid
	gr *rt.Graph
}

func (l *graphLoop) steps(n int) (float64, error) {
	g := l.g
	if l.gr == nil {
		st, r := g.spec()
		st.Iteration = 1
		gr, err := g.q.Record("hotspot pair", func(q *rt.Queue) error {
			scratch, err := tempSite.Alloc(q, g.size*g.size)
			if err != nil {
				return err
			}
			st.TempSrc, st.TempDst = g.pair, scratch
			if err := st.Enqueue(q, r); err != nil {
				return err
			}
			st.TempSrc, st.TempDst = scratch, g.pair
			return st.Enqueue(q, r)
		})
		if err != nil {
			return 0, err
		}
		l.gr = gr
	}
	start := time.Now()
	for range n / 2 {
		if err := l.gr.Launch(g.q); err != nil {
			return 0, err
		}
	}
	err := g.q.Finish()
	return perStep(start, n/2*2), err
}

// release releases the graph, and with it its scratch buffer.
func (l *graphLoop) release() {
	if l.gr != nil {
		l.gr.Release()
	}
}
