package main

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/dgen-go/dgen/rt"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// tempSite is where the time loop allocates each step's output
// temperatures: its tag keys the allocator's free list, so the block that
// the previous step's input freed serves the next output.
//
//dgen:alloc
var tempSite rt.AllocSite[float32]

//go:embed hotspot.cl
var hotspotSource string

// Block is the work-group edge: 16x16 work-items.
const Block = 16

// Rodinia's chip parameters (hotspot.c).
const (
	maxPD      = 3.0e6 // maximum power density, W/m^2
	precision  = 0.001 // required precision, degrees
	specHeatSi = 1.75e6
	kSi        = 100
	factorChip = 0.5
	tChip      = 0.0005
	chipHeight = 0.016
	chipWidth  = 0.016
	ambTemp    = 80.0
)

// Params are the physical constants of one grid size, as Rodinia's
// compute_tran_temp derives them, in float32 as its host code holds them.
type Params struct {
	Cap, Rx, Ry, Rz, Step float32
}

// ParamsFor returns the constants for a rows x cols grid.
func ParamsFor(rows, cols int) Params {
	gh := float32(chipHeight / float64(rows))
	gw := float32(chipWidth / float64(cols))
	maxSlope := float32(maxPD / (factorChip * tChip * specHeatSi))
	return Params{
		Cap:  float32(factorChip*specHeatSi*tChip) * gw * gh,
		Rx:   gw / (2.0 * kSi * tChip * gh),
		Ry:   gh / (2.0 * kSi * tChip * gw),
		Rz:   tChip / (kSi * gh * gw),
		Step: precision / maxSlope,
	}
}

// Inputs returns synthetic inputs in Rodinia's ranges for an n x n chip:
// temperatures uniform in 323-344 K, and non-negative power per cell summing
// to 40 W, concentrated in a few hot blocks as on a real die.
func Inputs(n int, seed uint64) (temp, power []float32) {
	r := rand.New(rand.NewPCG(seed, 0x407))
	temp, power = make([]float32, n*n), make([]float32, n*n)
	for i := range temp {
		temp[i] = 323 + 21*r.Float32()
	}
	type hot struct{ x, y, rad, w float64 }
	hots := make([]hot, 8)
	for i := range hots {
		hots[i] = hot{r.Float64() * float64(n), r.Float64() * float64(n), float64(n) * (0.05 + 0.1*r.Float64()), 1 + 4*r.Float64()}
	}
	var sum float64
	w := make([]float64, n*n)
	for y := range n {
		for x := range n {
			v := 0.2 * r.Float64()
			for _, h := range hots {
				dx, dy := float64(x)-h.x, float64(y)-h.y
				if dx*dx+dy*dy < h.rad*h.rad {
					v += h.w
				}
			}
			w[y*n+x] = v
			sum += v
		}
	}
	for i := range w {
		power[i] = float32(w[i] * 40 / sum)
	}
	return temp, power
}

// Reference runs iters time steps of the Hotspot update on the CPU, in
// float32 with the kernel's order of operations, and returns the final
// temperatures. It leaves temp unchanged.
func Reference(temp, power []float32, rows, cols, iters int, p Params) []float32 {
	sdc := p.Step / p.Cap
	rx1, ry1, rz1 := 1/p.Rx, 1/p.Ry, 1/p.Rz
	const amb = float32(ambTemp)
	cur := append([]float32(nil), temp...)
	next := make([]float32, len(temp))
	for range iters {
		for y := range rows {
			n, s := max(y-1, 0), min(y+1, rows-1)
			for x := range cols {
				w, e := max(x-1, 0), min(x+1, cols-1)
				c := cur[y*cols+x]
				next[y*cols+x] = c + sdc*(power[y*cols+x]+
					(cur[s*cols+x]+cur[n*cols+x]-2*c)*ry1+
					(cur[y*cols+e]+cur[y*cols+w]-2*c)*rx1+
					(amb-c)*rz1)
			}
		}
		cur, next = next, cur
	}
	return cur
}

// MaxAbsErr returns the largest |a[i]-b[i]|, +Inf if a value is not finite
// or the lengths differ.
func MaxAbsErr(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var m float64
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return math.Inf(1)
		}
		m = max(m, d)
	}
	return m
}

// Modes are the ways the time loop gets its output buffer each launch.
var Modes = []string{"tagged", "untagged", "driver", "swap"}

// Sim is a Hotspot simulation on one context: the built kernel and the
// power map, uploaded once.
type Sim struct {
	ctx        *rt.Context
	q          *rt.Queue
	k          *rt.Kernel
	power      rt.Buffer[float32]
	rows, cols int
	p          Params
}

// NewSim builds the kernel and uploads the power map of a rows x cols chip.
func NewSim(ctx *rt.Context, power []float32, rows, cols int) (*Sim, error) {
	if rows <= 0 || cols <= 0 || len(power) != rows*cols {
		return nil, fmt.Errorf("hotspot: %w: %d power values for a %dx%d grid", rt.ErrInvalidArgument, len(power), rows, cols)
	}
	prog, err := ctx.BuildProgram("hotspot", hotspotSource, "")
	if err != nil {
		return nil, err
	}
	k, err := prog.Kernel("hotspot")
	if err != nil {
		return nil, err
	}
	pb, err := rt.NewBuffer[float32](ctx, rows*cols)
	if err != nil {
		return nil, err
	}
	q := ctx.Queue()
	if err := pb.Write(q, power); err != nil {
		pb.Free()
		return nil, err
	}
	return &Sim{ctx: ctx, q: q, k: k, power: pb, rows: rows, cols: cols, p: ParamsFor(rows, cols)}, nil
}

// Close frees the power map.
func (s *Sim) Close() error { return s.power.Free() }

// Result is the outcome of one run of the time loop.
type Result struct {
	Temp     []float32     // final temperatures
	Elapsed  time.Duration // the time loop, from the first launch to the queue drained
	Launches int
	// DriverAllocs counts driver buffers created during the run, input
	// included; AllocsAfterFirst those created after the first launch's
	// allocation and free. Reuses counts allocations served from a free list.
	DriverAllocs, AllocsAfterFirst, Reuses uint64
}

// Run advances temp by iters time steps, pyramid steps per launch, getting
// each launch's output buffer as mode says. Buffers held by the allocator
// are released first, so every run starts cold.
func (s *Sim) Run(mode string, temp []float32, iters, pyramid int) (Result, error) {
	if len(temp) != s.rows*s.cols {
		return Result{}, fmt.Errorf("hotspot: %w: %d temperatures for a %dx%d grid", rt.ErrInvalidArgument, len(temp), s.rows, s.cols)
	}
	if pyramid < 1 || 2*pyramid >= Block {
		return Result{}, fmt.Errorf("hotspot: %w: pyramid height %d (want 1 to %d)", rt.ErrInvalidArgument, pyramid, Block/2-1)
	}
	if iters < 0 {
		return Result{}, fmt.Errorf("hotspot: %w: %d iterations", rt.ErrInvalidArgument, iters)
	}
	var next func() (rt.Buffer[float32], error)
	n := s.rows * s.cols
	switch mode {
	case "tagged":
		next = func() (rt.Buffer[float32], error) { return tempSite.Alloc(s.q, n) }
	case "untagged":
		next = func() (rt.Buffer[float32], error) { return rt.Alloc[float32](s.q, n) }
	case "driver", "swap":
		next = func() (rt.Buffer[float32], error) { return rt.NewBuffer[float32](s.ctx, n) }
	default:
		return Result{}, fmt.Errorf("hotspot: %w: mode %q (want tagged, untagged, driver or swap)", rt.ErrInvalidArgument, mode)
	}
	if err := s.ctx.ReleaseHeld(); err != nil {
		return Result{}, err
	}
	before := s.ctx.AllocStats()
	in, err := next()
	if err != nil {
		return Result{}, err
	}
	var spare rt.Buffer[float32] // swap's second buffer
	defer func() {
		in.Free()
		if !spare.IsNil() {
			spare.Free()
		}
	}()
	if mode == "swap" {
		if spare, err = next(); err != nil {
			return Result{}, err
		}
	}
	if err := in.Write(s.q, temp); err != nil {
		return Result{}, err
	}

	small := Block - 2*pyramid
	gx := (s.cols + small - 1) / small * Block
	gy := (s.rows + small - 1) / small * Block
	r := rt.Range2(gx, gy).WithLocal(Block, Block)
	k, p := s.k, s.p
	err = errors.Join(k.SetBuffer(1, s.power.Mem()), rt.SetArg(k, 4, int32(s.cols)), rt.SetArg(k, 5, int32(s.rows)),
		rt.SetArg(k, 6, int32(pyramid)), rt.SetArg(k, 7, int32(pyramid)),
		rt.SetArg(k, 8, p.Cap), rt.SetArg(k, 9, p.Rx), rt.SetArg(k, 10, p.Ry), rt.SetArg(k, 11, p.Rz), rt.SetArg(k, 12, p.Step))
	if err != nil {
		return Result{}, err
	}

	var res Result
	var afterFirst uint64
	start := time.Now()
	for t := 0; t < iters; t += pyramid {
		var out rt.Buffer[float32]
		if mode == "swap" {
			out = spare
		} else if out, err = next(); err != nil {
			return Result{}, err
		}
		err := errors.Join(rt.SetArg(k, 0, int32(min(pyramid, iters-t))), k.SetBuffer(2, in.Mem()), k.SetBuffer(3, out.Mem()))
		if err != nil {
			return Result{}, err
		}
		ev, err := s.q.Launch(k, r)
		if err != nil {
			return Result{}, err
		}
		ev.Release()
		if mode == "swap" {
			spare = in
		} else if err := in.Free(); err != nil {
			// The in-order queue runs the next launch, which may write this
			// block, only after this one has read it.
			return Result{}, err
		}
		in = out
		res.Launches++
		if res.Launches == 1 {
			afterFirst = s.ctx.AllocStats().DriverAllocs
		}
	}
	if err := s.q.Finish(); err != nil {
		return Result{}, err
	}
	res.Elapsed = time.Since(start)
	after := s.ctx.AllocStats()
	res.DriverAllocs = after.DriverAllocs - before.DriverAllocs
	if res.Launches > 0 {
		res.AllocsAfterFirst = after.DriverAllocs - afterFirst
	}
	res.Reuses = after.Total().Reuses - before.Total().Reuses
	res.Temp = make([]float32, n)
	if err := in.Read(s.q, res.Temp); err != nil {
		return Result{}, err
	}
	return res, nil
}
