package main

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// ChipParams are Hotspot's coefficients, as OpenCL C lays out struct
// ChipParams.
type ChipParams struct {
	Sdc, Rx1, Ry1, Rz1, Amb float32
}

// Chip holds the coefficients of the grid being simulated.
//
//dgen:global host_access=write
var Chip rt.DeviceGlobal[ChipParams]

// Hotspot is the image of hotspot.cl.
//
//dgen:program source=hotspot.cl
var Hotspot rt.Program

// HotspotStep advances Temp by one time step into Next.
//
//dgen:kernel program=Hotspot name=hotspot_step
type HotspotStep struct {
	Next       rt.Buffer[float32] `dgen:"out"`
	Temp       rt.Buffer[float32]
	Power      rt.Buffer[float32]
	Rows, Cols int32
}

// chipFor returns Rodinia's coefficients (hotspot.c) for an n x n chip
// of 16 mm x 16 mm.
func chipFor(n int) ChipParams {
	const (
		maxPD, precision, specHeatSi, kSi = 3.0e6, 0.001, 1.75e6, 100
		factorChip, tChip, chip           = 0.5, 0.0005, 0.016
	)
	g := chip / float64(n)
	capacity := factorChip * specHeatSi * tChip * g * g
	step := precision / (maxPD / (factorChip * tChip * specHeatSi))
	r := g / (2 * kSi * tChip * g)
	return ChipParams{Sdc: float32(step / capacity), Rx1: float32(1 / r), Ry1: float32(1 / r), Rz1: float32(kSi * g * g / tChip), Amb: 80}
}

// hotspot runs Size.M time steps of an Size.N x Size.N chip, allocating
// each step's grid (the 40% Futhark reports for Hotspot is against its
// older code that copied the loop result, not against driver allocation).
var hotspot = Program{
	Name:   "hotspot",
	Source: "rodinia/hotspot/hotspot.fut",
	Datasets: []Dataset{
		{Name: "512", Futhark: 1.40, GPU: Size{N: 512, M: 360}, Small: Size{N: 256, M: 60}},
		{Name: "1024", Futhark: 1.40, GPU: Size{N: 1024, M: 360}, Small: Size{N: 512, M: 60}},
	},
	Test: Size{N: 70, M: 9},
	New:  newHotspot,
}

type hotspotCase struct {
	e           *Env
	n, steps    int
	temp, power []float32
	dTemp, dPow rt.Buffer[float32]
	out         rt.Buffer[float32]
	chip        ChipParams
}

func newHotspot(e *Env, s Size, seed uint64) (Case, error) {
	if s.N <= 0 || s.M <= 0 {
		return nil, fmt.Errorf("hotspot: %w: %d steps of a %d x %d grid", rt.ErrInvalidArgument, s.M, s.N, s.N)
	}
	r := rand.New(rand.NewPCG(seed, 0x407))
	c := &hotspotCase{e: e, n: s.N, steps: s.M, temp: make([]float32, s.N*s.N), power: make([]float32, s.N*s.N), chip: chipFor(s.N)}
	for i := range c.temp {
		c.temp[i] = 323 + 21*r.Float32()
		c.power[i] = 1e-3 * r.Float32() * float32(1+i%7)
	}
	var err error
	if c.dTemp, err = upload(e, c.temp); err != nil {
		return nil, err
	}
	if c.dPow, err = upload(e, c.power); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := Chip.Write(e.Q, c.chip); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (c *hotspotCase) Run() error {
	if err := free(c.out); err != nil {
		return err
	}
	c.out = rt.Buffer[float32]{}
	e, n := c.e, c.n
	r := rt.Range2(n, n)
	cur := c.dTemp
	for step := range c.steps {
		k := HotspotStep{Temp: cur, Power: c.dPow, Rows: int32(n), Cols: int32(n)}
		var in freer // the input grid, ours to free after the first step
		if step > 0 {
			in = cur
		}
		if err := stage(e, k.AllocNext, &k.Next, n*n, k.Enqueue, r, in); err != nil {
			return err
		}
		cur = k.Next
	}
	c.out = cur
	return e.Q.Finish()
}

func (c *hotspotCase) Verify() error {
	got, err := download(c.e, c.out)
	if err != nil {
		return err
	}
	n, p := c.n, c.chip
	cur, next := append([]float32(nil), c.temp...), make([]float32, n*n)
	for range c.steps {
		for y := range n {
			for x := range n {
				i := y*n + x
				t := cur[i]
				no, so := cur[max(y-1, 0)*n+x], cur[min(y+1, n-1)*n+x]
				w, e := cur[y*n+max(x-1, 0)], cur[y*n+min(x+1, n-1)]
				d := c.power[i] + float32((so+no-float32(2*t))*p.Ry1)
				d += float32((e + w - float32(2*t)) * p.Rx1)
				d += float32((p.Amb - t) * p.Rz1)
				next[i] = t + float32(p.Sdc*d)
			}
		}
		cur, next = next, cur
	}
	return near("temperature", got, cur, 1e-3, 0)
}

func (c *hotspotCase) Close() error { return free(c.dTemp, c.dPow, c.out) }
