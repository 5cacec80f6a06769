package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// PerBox is the number of particles in a box, a macro of lavamd.cl.
//
//dgen:specconst
var PerBox rt.SpecConst[int32]

// LavaMD is the image of lavamd.cl.
//
//dgen:program source=lavamd.cl
var LavaMD rt.Program

// Forces computes the potential and force on every particle; launch it
// with one work-group of lavaGroup work-items per box.
//
//dgen:kernel program=LavaMD name=lavamd
type Forces struct {
	FV, FX, FY, FZ rt.Buffer[float32] `dgen:"out"`
	V, X, Y, Z, Q  rt.Buffer[float32]
	Neighbours     rt.Buffer[int32]
	A2             float32
	LV, LX, LY, LZ rt.Local[float32]
	LQ             rt.Local[float32]
}

const (
	lavaPerBox = 100 // Rodinia's NUMBER_PAR_PER_BOX
	lavaGroup  = 128 // work-items per box
	lavaAlpha  = 0.5
)

// lavaMD computes the forces among lavaPerBox particles in each of Size.N^3
// boxes, allocating the four force arrays in every run.
var lavaMD = Program{
	Name:   "lavamd",
	Source: "rodinia/lavaMD/lavaMD.fut",
	Datasets: []Dataset{
		{Name: "10_boxes", Futhark: 1.11, GPU: Size{N: 10}, Small: Size{N: 4}},
	},
	Test: Size{N: 2},
	New:  newLavaMD,
}

type lavaCase struct {
	e              *Env
	dim            int
	in             [5][]float32 // v, x, y, z, q
	nbs            []int32
	dIn            [5]rt.Buffer[float32]
	dNbs           rt.Buffer[int32]
	fv, fx, fy, fz rt.Buffer[float32]
}

func newLavaMD(e *Env, s Size, seed uint64) (Case, error) {
	if s.N <= 0 {
		return nil, fmt.Errorf("lavamd: %w: %d boxes per side", rt.ErrInvalidArgument, s.N)
	}
	r := rand.New(rand.NewPCG(seed, 0x1a7a))
	boxes := s.N * s.N * s.N
	c := &lavaCase{e: e, dim: s.N}
	for k := range c.in {
		c.in[k] = make([]float32, boxes*lavaPerBox)
		for i := range c.in[k] {
			c.in[k][i] = 0.1 + 0.9*r.Float32() // Rodinia's (rand()%10+1)/10, continuous
		}
	}
	c.nbs = neighbours(s.N)
	if err := PerBox.Set(e.Ctx, lavaPerBox); err != nil {
		return nil, err
	}
	var err error
	for k := range c.in {
		if c.dIn[k], err = upload(e, c.in[k]); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	if c.dNbs, err = upload(e, c.nbs); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// neighbours returns, for each box of a dim x dim x dim cube, 27 box
// indices: itself, its neighbours, then -1 to fill.
func neighbours(dim int) []int32 {
	var nbs []int32
	in := func(v int) bool { return v >= 0 && v < dim }
	for b := range dim * dim * dim {
		bx, by, bz := b%dim, b/dim%dim, b/(dim*dim)
		nb := []int32{int32(b)}
		for dz := -1; dz <= 1; dz++ {
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					x, y, z := bx+dx, by+dy, bz+dz
					if (dx != 0 || dy != 0 || dz != 0) && in(x) && in(y) && in(z) {
						nb = append(nb, int32((z*dim+y)*dim+x))
					}
				}
			}
		}
		for len(nb) < 27 {
			nb = append(nb, -1)
		}
		nbs = append(nbs, nb...)
	}
	return nbs
}

func (c *lavaCase) Run() error {
	if err := c.freeForces(); err != nil {
		return err
	}
	n := len(c.in[0])
	l := rt.Local[float32]{Len: lavaPerBox}
	k := Forces{V: c.dIn[0], X: c.dIn[1], Y: c.dIn[2], Z: c.dIn[3], Q: c.dIn[4], Neighbours: c.dNbs,
		A2: 2 * lavaAlpha * lavaAlpha, LV: l, LX: l, LY: l, LZ: l, LQ: l}
	outs := []struct {
		alloc func(*rt.Queue, int) error
		field *rt.Buffer[float32]
		keep  *rt.Buffer[float32]
	}{{k.AllocFV, &k.FV, &c.fv}, {k.AllocFX, &k.FX, &c.fx}, {k.AllocFY, &k.FY, &c.fy}, {k.AllocFZ, &k.FZ, &c.fz}}
	for _, o := range outs {
		if err := allocOut(c.e, o.alloc, o.field, n); err != nil {
			return err
		}
		*o.keep = *o.field
	}
	boxes := n / lavaPerBox
	if err := k.Enqueue(c.e.Q, rt.Range1(boxes*lavaGroup).WithLocal(lavaGroup)); err != nil {
		return err
	}
	return c.e.Q.Finish()
}

func (c *lavaCase) freeForces() error {
	err := free(c.fv, c.fx, c.fy, c.fz)
	c.fv, c.fx, c.fy, c.fz = rt.Buffer[float32]{}, rt.Buffer[float32]{}, rt.Buffer[float32]{}, rt.Buffer[float32]{}
	return err
}

// Verify computes the forces in float64 and compares within 1e-4
// relative to the sum of the magnitudes of each particle's terms.
func (c *lavaCase) Verify() error {
	var got [4][]float32
	for k, b := range []rt.Buffer[float32]{c.fv, c.fx, c.fy, c.fz} {
		var err error
		if got[k], err = download(c.e, b); err != nil {
			return err
		}
	}
	v, x, y, z, q := c.in[0], c.in[1], c.in[2], c.in[3], c.in[4]
	a2 := 2.0 * lavaAlpha * lavaAlpha
	names := [4]string{"potential", "force x", "force y", "force z"}
	for i := range v {
		var want, scale [4]float64
		for _, nb := range c.nbs[i/lavaPerBox*27:][:27] {
			if nb < 0 {
				break
			}
			for j := int(nb) * lavaPerBox; j < int(nb+1)*lavaPerBox; j++ {
				r2 := float64(v[i]) + float64(v[j]) - (float64(x[i])*float64(x[j]) + float64(y[i])*float64(y[j]) + float64(z[i])*float64(z[j]))
				vij := math.Exp(-a2 * r2)
				qj := float64(q[j])
				terms := [4]float64{qj * vij, qj * 2 * vij * float64(x[i]-x[j]), qj * 2 * vij * float64(y[i]-y[j]), qj * 2 * vij * float64(z[i]-z[j])}
				for k, t := range terms {
					want[k] += t
					scale[k] += math.Abs(t)
				}
			}
		}
		for k := range want {
			if d := math.Abs(float64(got[k][i]) - want[k]); !(d <= 1e-4*scale[k]+1e-6) {
				return mismatch(names[k], i, got[k][i], float32(want[k]))
			}
		}
	}
	return nil
}

func (c *lavaCase) Close() error {
	err := free(c.dIn[0], c.dIn[1], c.dIn[2], c.dIn[3], c.dIn[4], c.dNbs)
	return errors.Join(err, c.freeForces())
}
