package main

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// LUD is the image of lud.cl.
//
//dgen:program source=lud.cl
var LUD rt.Program

// ludBlock is BS of lud.cl.
const ludBlock = 16

// Diagonal factors the diagonal block at (K, K) of the N x N matrix A.
//
//dgen:kernel program=LUD name=lud_diagonal
type Diagonal struct {
	Diag rt.Buffer[float32] `dgen:"out"`
	A    rt.Buffer[float32]
	N, K int32
}

// Perimeter solves the blocks right of and below the diagonal block.
//
//dgen:kernel program=LUD name=lud_perimeter
type Perimeter struct {
	Row  rt.Buffer[float32] `dgen:"out"`
	Col  rt.Buffer[float32] `dgen:"out"`
	A    rt.Buffer[float32]
	Diag rt.Buffer[float32]
	N, K int32
}

// Internal updates the trailing matrix.
//
//dgen:kernel program=LUD name=lud_internal
type Internal struct {
	A        rt.Buffer[float32]
	Row, Col rt.Buffer[float32]
	N, K     int32
}

// matrixSite is where a run allocates the matrix it factors in place.
//
//dgen:alloc
var matrixSite rt.AllocSite[float32]

// lud factors a Size.N x Size.N diagonally dominant matrix (N a multiple
// of 16), allocating the diagonal block and the two perimeter strips in
// every step.
var lud = Program{
	Name:   "lud",
	Source: "rodinia/lud/lud.fut",
	Datasets: []Dataset{
		{Name: "2048", Futhark: 1.15, GPU: Size{N: 2048}, Small: Size{N: 1024}},
		{Name: "512", Futhark: 1.16, GPU: Size{N: 512}, Small: Size{N: 512}},
		{Name: "256", Futhark: 1.13, GPU: Size{N: 256}, Small: Size{N: 256}},
	},
	Test: Size{N: 80},
	New:  newLUD,
}

type ludCase struct {
	e   *Env
	n   int
	in  []float32
	dIn rt.Buffer[float32]
	a   rt.Buffer[float32]
}

func newLUD(e *Env, s Size, seed uint64) (Case, error) {
	if s.N%ludBlock != 0 || s.N <= 0 {
		return nil, fmt.Errorf("lud: %w: size %d is not a positive multiple of %d", rt.ErrInvalidArgument, s.N, ludBlock)
	}
	r := rand.New(rand.NewPCG(seed, 0x10d))
	c := &ludCase{e: e, n: s.N, in: make([]float32, s.N*s.N)}
	for i := range c.in {
		c.in[i] = r.Float32()
	}
	for i := range s.N {
		c.in[i*s.N+i] += float32(s.N)
	}
	var err error
	if c.dIn, err = upload(e, c.in); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *ludCase) Run() error {
	if err := free(c.a); err != nil {
		return err
	}
	e, n := c.e, c.n
	var err error
	if c.a, err = alloc(e, &matrixSite, n*n); err != nil {
		return err
	}
	if err := c.dIn.CopyTo(e.Q, c.a); err != nil {
		return err
	}
	for k := 0; k < n; k += ludBlock {
		if err := c.step(k); err != nil {
			return err
		}
	}
	return e.Q.Finish()
}

// step factors the diagonal block at k and updates what lies right of and
// below it.
func (c *ludCase) step(k int) (err error) {
	e, n, a := c.e, int32(c.n), c.a
	d := Diagonal{A: a, N: n, K: int32(k)}
	if err := allocOut(e, d.AllocDiag, &d.Diag, ludBlock*ludBlock); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Diag.Free()) }()
	if err := d.Enqueue(e.Q, rt.Range1(ludBlock).WithLocal(ludBlock)); err != nil {
		return err
	}
	w := c.n - k - ludBlock
	if w == 0 {
		return nil
	}
	p := Perimeter{A: a, Diag: d.Diag, N: n, K: int32(k)}
	if err := allocOut(e, p.AllocRow, &p.Row, w*ludBlock); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Row.Free()) }()
	if err := allocOut(e, p.AllocCol, &p.Col, w*ludBlock); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Col.Free()) }()
	if err := p.Enqueue(e.Q, rt.Range1(2*w)); err != nil {
		return err
	}
	in := Internal{A: a, Row: p.Row, Col: p.Col, N: n, K: int32(k)}
	return in.Enqueue(e.Q, rt.Range2(w, w).WithLocal(ludBlock, ludBlock))
}

// Verify factors the input in float64 (Doolittle, no pivoting) and
// compares L and U, stored in place, within 1e-3 relative.
func (c *ludCase) Verify() error {
	got, err := download(c.e, c.a)
	if err != nil {
		return err
	}
	n := c.n
	a := make([]float64, n*n)
	for i, v := range c.in {
		a[i] = float64(v)
	}
	for i := range n {
		for r := i + 1; r < n; r++ {
			a[r*n+i] /= a[i*n+i]
			l := a[r*n+i]
			for j := i + 1; j < n; j++ {
				a[r*n+j] -= l * a[i*n+j]
			}
		}
	}
	want := make([]float32, n*n)
	for i, v := range a {
		want[i] = float32(v)
	}
	return near("LU", got, want, 1e-4, 1e-3)
}

func (c *ludCase) Close() error { return free(c.dIn, c.a) }
