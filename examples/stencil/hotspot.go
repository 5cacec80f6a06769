package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Hotspot is the device image: hotspot.cl, read and checked by dgen at
// generate time and embedded in the generated file.
//
//dgen:program source=hotspot.cl
var Hotspot rt.Program

// Step is one launch of the hotspot kernel: Iteration time steps of the
// chip's temperatures from TempSrc into TempDst. Its fields map, in order,
// to the kernel's parameters; dgen checked their types against hotspot.cl
// and generated Step.Enqueue.
//
//dgen:kernel program=Hotspot name=hotspot
type Step struct {
	Iteration              int32
	Power, TempSrc         rt.Buffer[float32]
	TempDst                rt.Buffer[float32]
	Cols, Rows             int32
	BorderCols, BorderRows int32
	Cap, Rx, Ry, Rz, Dt    float32
}

// tempSite is where the time loop allocates each step's output
// temperatures: its tag keys the allocator's free list, so the block that
// the previous step's input freed serves the next output.
//
//dgen:alloc
var tempSite rt.AllocSite[float32]

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

// Digest returns a hash of the bits of temp (FNV-1a, 64 bits, in hex):
// equal digests mean equal results, bit for bit.
func Digest(temp []float32) string {
	h := uint64(14695981039346656037)
	for _, v := range temp {
		b := math.Float32bits(v)
		for range 4 {
			h = (h ^ uint64(b&0xff)) * 1099511628211
			b >>= 8
		}
	}
	return fmt.Sprintf("%016x", h)
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

// Modes are the ways the time loop gets its output buffer each launch; raw
// is the yardstick: swap's double buffer on rt/raw's calls, with no
// event per launch.
var Modes = []string{"tagged", "untagged", "driver", "swap", "raw"}

// Sim is a Hotspot simulation on one context: the power map, uploaded
// once, and the kernel object that raw mode drives by hand.
type Sim struct {
	ctx        *rt.Context
	q          *rt.Queue
	raw        *raw.Kernel
	power      rt.Buffer[float32]
	rows, cols int
	p          Params
	// Graph makes Run record two time steps (a ping-pong pair) into a
	// command graph once and replay it, instead of enqueuing every step;
	// raw mode ignores it.
	Graph bool
}

// NewSim builds the program and uploads the power map of a rows x cols chip.
func NewSim(ctx *rt.Context, power []float32, rows, cols int) (*Sim, error) {
	if rows <= 0 || cols <= 0 || len(power) != rows*cols {
		return nil, fmt.Errorf("hotspot: %w: %d power values for a %dx%d grid", rt.ErrInvalidArgument, len(power), rows, cols)
	}
	prog, err := raw.BuildGenerated(ctx, &Hotspot)
	if err != nil {
		return nil, err
	}
	k, err := prog.Kernel("hotspot")
	if err != nil {
		return nil, err
	}
	pb, err := rt.NewBuffer[float32](ctx, rows*cols)
	if err != nil {
		k.Release()
		return nil, err
	}
	q := ctx.Queue()
	if err := pb.Write(q, power); err != nil {
		k.Release()
		pb.Free()
		return nil, err
	}
	return &Sim{ctx: ctx, q: q, raw: k, power: pb, rows: rows, cols: cols, p: ParamsFor(rows, cols)}, nil
}

// Close frees the power map and the raw kernel object.
func (s *Sim) Close() error { return errors.Join(s.raw.Release(), s.power.Free()) }

// Result is the outcome of one run of the time loop.
type Result struct {
	Temp    []float32     // final temperatures
	Elapsed time.Duration // the time loop, from the first launch to the queue drained
	// Record is, with Sim.Graph, the time to record the graph and launch
	// it once before the time loop (graphSteps), which Elapsed leaves out.
	Record   time.Duration
	Launches int
	// DriverAllocs counts driver buffers created during the run, input
	// included; AllocsAfterFirst those created after the first launch's
	// allocation and free. Reuses counts allocations served from a free list.
	DriverAllocs, AllocsAfterFirst, Reuses uint64
}

// allocator returns how mode gets a buffer of n temperatures.
func (s *Sim) allocator(mode string, n int) (func(q *rt.Queue) (rt.Buffer[float32], error), error) {
	switch mode {
	case "tagged":
		return func(q *rt.Queue) (rt.Buffer[float32], error) { return tempSite.Alloc(q, n) }, nil
	case "untagged":
		return func(q *rt.Queue) (rt.Buffer[float32], error) { return rt.Alloc[float32](q, n) }, nil
	case "driver", "swap", "raw":
		return func(*rt.Queue) (rt.Buffer[float32], error) { return rt.NewBuffer[float32](s.ctx, n) }, nil
	}
	return nil, fmt.Errorf("hotspot: %w: mode %q (want %s)", rt.ErrInvalidArgument, mode, strings.Join(Modes, ", "))
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
	n := s.rows * s.cols
	next, err := s.allocator(mode, n)
	if err != nil {
		return Result{}, err
	}
	if err := s.ctx.ReleaseHeld(); err != nil {
		return Result{}, err
	}
	before := s.ctx.Stats().Alloc
	in, err := next(s.q)
	if err != nil {
		return Result{}, err
	}
	var spare rt.Buffer[float32] // the double buffer's second half
	defer func() {
		in.Free()
		if spare.Len() > 0 {
			spare.Free()
		}
	}()
	if mode == "swap" || mode == "raw" {
		if spare, err = next(s.q); err != nil {
			return Result{}, err
		}
	}
	if err := in.Write(s.q, temp); err != nil {
		return Result{}, err
	}
	l := loop{s: s, mode: mode, iters: iters, pyramid: pyramid, in: in, spare: spare, next: next, temp: temp}
	switch {
	case mode == "raw":
		err = l.raw()
	case s.Graph:
		err = l.graphSteps()
	default:
		err = l.steps()
	}
	in, spare = l.in, l.spare
	if err != nil {
		return Result{}, err
	}
	res := l.res
	after := s.ctx.Stats().Alloc
	res.DriverAllocs = after.DriverAllocs - before.DriverAllocs
	if res.Launches > 0 {
		res.AllocsAfterFirst = after.DriverAllocs - l.afterFirst
	}
	res.Reuses = after.Total().Reuses - before.Total().Reuses
	res.Temp = make([]float32, n)
	if err := in.Read(s.q, res.Temp); err != nil {
		return Result{}, err
	}
	return res, nil
}

// loop is one run of the time loop: in holds the current temperatures.
type loop struct {
	s              *Sim
	mode           string
	iters, pyramid int
	in, spare      rt.Buffer[float32]
	temp           []float32                                     // the input temperatures
	next           func(q *rt.Queue) (rt.Buffer[float32], error) // allocates on q
	res            Result
	afterFirst     uint64 // driver allocations after the first launch
}

// grid returns the launch range: one 16x16 work-group per inner tile.
func (l *loop) grid() rt.Range {
	small := Block - 2*l.pyramid
	gx := (l.s.cols + small - 1) / small * Block
	gy := (l.s.rows + small - 1) / small * Block
	return rt.Range2(gx, gy).WithLocal(Block, Block)
}

// steps runs the loop through the generated Step.Enqueue, as an application
// would write it.
func (l *loop) steps() error {
	st, r := l.stepSpec(), l.grid()
	start := time.Now()
	if err := l.stepFrom(&st, r, 0); err != nil {
		return err
	}
	return l.finish(start)
}

// stepSpec returns the kernel spec of the loop's launches with every
// argument set but the step count and the buffers.
func (l *loop) stepSpec() Step {
	s, p := l.s, l.s.p
	return Step{
		Power: s.power, Cols: int32(s.cols), Rows: int32(s.rows),
		BorderCols: int32(l.pyramid), BorderRows: int32(l.pyramid),
		Cap: p.Cap, Rx: p.Rx, Ry: p.Ry, Rz: p.Rz, Dt: p.Step,
	}
}

// stepFrom enqueues the time steps from step t to the end through st:
// each launch's output from the mode's allocator, its input freed once
// the launch is enqueued.
func (l *loop) stepFrom(st *Step, r rt.Range, t int) error {
	for ; t < l.iters; t += l.pyramid {
		out := l.spare
		if l.mode != "swap" {
			var err error
			if out, err = l.next(l.s.q); err != nil {
				return err
			}
		}
		st.Iteration, st.TempSrc, st.TempDst = int32(min(l.pyramid, l.iters-t)), l.in, out
		if err := st.Enqueue(l.s.q, r); err != nil {
			return err
		}
		if l.mode == "swap" {
			l.spare = l.in
		} else if err := l.in.Free(); err != nil {
			// The in-order queue runs the next launch, which may write this
			// block, only after this one has read it.
			return err
		}
		l.in = out
		l.launched()
	}
	return nil
}

// launched counts a launch, noting the driver allocations after the first.
func (l *loop) launched() {
	if l.res.Launches++; l.res.Launches == 1 {
		l.afterFirst = l.s.ctx.Stats().Alloc.DriverAllocs
	}
}

// finish drains the queue and records the time since start.
func (l *loop) finish(start time.Time) error {
	if err := l.s.q.Finish(); err != nil {
		return err
	}
	l.res.Elapsed = time.Since(start)
	return nil
}

// raw runs the same loop on rt/raw's calls: one kernel object whose
// constant arguments are set once, two buffers swapped, and launches that
// create no event.
func (l *loop) raw() error {
	s, k, p := l.s, l.s.raw, l.s.p
	err := errors.Join(raw.SetBuffer(k, 1, s.power), raw.SetArg(k, 4, int32(s.cols)), raw.SetArg(k, 5, int32(s.rows)),
		raw.SetArg(k, 6, int32(l.pyramid)), raw.SetArg(k, 7, int32(l.pyramid)),
		raw.SetArg(k, 8, p.Cap), raw.SetArg(k, 9, p.Rx), raw.SetArg(k, 10, p.Ry), raw.SetArg(k, 11, p.Rz), raw.SetArg(k, 12, p.Step))
	if err != nil {
		return err
	}
	r := l.grid()
	start := time.Now()
	for t := 0; t < l.iters; t += l.pyramid {
		err := errors.Join(raw.SetArg(k, 0, int32(min(l.pyramid, l.iters-t))), raw.SetBuffer(k, 2, l.in), raw.SetBuffer(k, 3, l.spare))
		if err != nil {
			return err
		}
		if err := raw.Submit(s.q, k, r); err != nil {
			return err
		}
		l.in, l.spare = l.spare, l.in
		l.launched()
	}
	return l.finish(start)
}

// graphSteps runs the loop as steps does, but records two full steps once,
// in to a scratch buffer and back, into a command graph and replays it;
// the steps that do not make a pair (an odd one, a last one of fewer
// steps than the pyramid height) go through Enqueue. The scratch buffer
// of the allocating modes is allocated while recording, so it is the
// graph's, freed when the graph is released.
//
// As CuPy's graph mode (cupy/hotspot.py) does, the recording and a first
// launch, which prepares the device API's graph for the queue (on CUDA a
// capture, an instantiation and an upload), come before the timer, and
// the input is written again after them; Result.Record is their time.
func (l *loop) graphSteps() error {
	st, r := l.stepSpec(), l.grid()
	st.Iteration = int32(l.pyramid)
	full := l.iters / l.pyramid
	pairs := full / 2
	var g *rt.Graph
	release := func() error { return nil }
	if pairs > 0 {
		t0 := time.Now()
		var err error
		if g, release, err = l.recordPair(&st, r); err != nil {
			return err
		}
		l.res.Record = time.Since(t0)
	}
	start := time.Now()
	for range pairs {
		if err := g.Launch(l.s.q); err != nil {
			return errors.Join(err, release())
		}
		l.launched()
		l.launched()
	}
	// The graph frees its scratch buffer when released: the queue is in
	// order, so the memory is reused only after the last launch.
	if err := release(); err != nil {
		return err
	}
	if err := l.stepFrom(&st, r, full/2*2*l.pyramid); err != nil {
		return err
	}
	return l.finish(start)
}

// recordPair records the pair of steps in -> scratch -> in, launches it
// once and writes the input again, and returns the graph with the function
// that releases it.
func (l *loop) recordPair(st *Step, r rt.Range) (*rt.Graph, func() error, error) {
	s := l.s
	scratch := l.spare
	g, err := s.q.Record("hotspot pair", func(q *rt.Queue) error {
		if l.mode != "swap" {
			var err error
			if scratch, err = l.next(q); err != nil { // on the recording queue: the graph's
				return err
			}
		}
		st.TempSrc, st.TempDst = l.in, scratch
		if err := st.Enqueue(q, r); err != nil {
			return err
		}
		st.TempSrc, st.TempDst = scratch, l.in
		return st.Enqueue(q, r)
	})
	release := func() error {
		var err error
		if g != nil {
			err = g.Release()
		}
		if l.mode == "driver" && scratch.Len() > 0 { // not the allocator's: the graph does not own it
			err = errors.Join(err, scratch.Free())
		}
		return err
	}
	if err == nil {
		err = errors.Join(g.Launch(s.q), s.q.Finish(), l.in.Write(s.q, l.temp))
	}
	if err != nil {
		return nil, nil, errors.Join(err, release())
	}
	return g, release, nil
}
