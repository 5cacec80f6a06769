// Command tune tunes the tile size of a tiled matrix multiply with
// rt.SpecConst.Tune: the first run on a device times each candidate of
// TILE with device timestamps and keeps the winner as a tuning record in
// the persistent cache (and the fleet tier, with DGEN_CACHE_REMOTE); a
// later run, on this machine or another node of the fleet, gets the
// winner without timing anything. The tile size is a per-launch value:
// the kernel spec's field Tile gives each launch its own TILE, with the
// work-group size to match, so that tuning never changes what other
// launches on the context run with. It checks the product against Go and
// prints one JSON object: "ok" (the result verified), "winner" and
// "timed" (candidates timed by this process: 0 when the winner came from a
// record), "default" (the context's TILE, which tuning leaves alone); with
// -bench, each candidate's device time.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends"   // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
	_ "github.com/dgen-go/dgen/rt/fleetcache" // the fleet tier, when DGEN_CACHE_REMOTE names one
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// MatMul is the device image.
//
//dgen:program source=matmul.cl
var MatMul rt.Program

// TILE is the edge of a work-group's tile. 64 (4096 work-items) is more
// than most GPUs allow in a work-group: rt.Tune skips it there and says
// why.
//
//dgen:specconst default=16 min=1 max=64 tune="4,8,16,32,64"
var TILE rt.SpecConst[int32]

// Mul is one launch of the kernel. Tile is no kernel argument: it is the
// launch's own value of TILE (TILE.Of(16)), which must match the
// work-group size the launch asks for.
//
//dgen:kernel program=MatMul name=matmul
type Mul struct {
	A, B rt.Buffer[float32]
	C    rt.Buffer[float32]
	N    int32
	Tile rt.Spec[int32] `dgen:"spec=TILE"`
}

// Result is what the command prints.
type Result struct {
	OK     bool   `json:"ok"`
	Device string `json:"device"`
	N      int    `json:"n"`
	Winner int32  `json:"winner"`
	Timed  int    `json:"timed"`
	// Default is the context's TILE after tuning: the directive's
	// default, since Tune times candidates as per-launch values.
	Default int32   `json:"default"`
	Cached  bool    `json:"cached"`
	MaxErr  float64 `json:"max_rel_err"` // against Go
	// Bench holds, with -bench, the device times of reps multiplies with
	// each candidate that runs on the device, set in turn.
	Bench []BenchRow `json:"bench,omitempty"`
	Error string     `json:"error,omitempty"`
}

// BenchRow is the device time of one multiply with one tile size: the
// median, minimum and maximum of reps runs, each timed between two
// markers by the device's timestamps.
type BenchRow struct {
	Role   string  `json:"role,omitempty"` // winner, default, slowest
	Tile   int32   `json:"tile"`
	Median float64 `json:"median_us"`
	Min    float64 `json:"min_us"`
	Max    float64 `json:"max_us"`
	GFLOPS float64 `json:"gflops"` // at the median
}

func main() {
	n := flag.Int("n", 256, "matrix edge, a multiple of 64")
	flag.IntVar(&benchReps, "bench", 0, "after tuning, time this many multiplies with each candidate")
	flag.Parse()
	res, err := run(*n)
	if err != nil {
		res.Error = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(res)
	if !res.OK {
		os.Exit(1)
	}
}

func run(n int) (res Result, err error) {
	res.N = n
	if n <= 0 || n%64 != 0 {
		return res, fmt.Errorf("-n %d: want a positive multiple of 64", n)
	}
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		return res, err
	}
	cfg.Profiling = true // device timestamps time the candidates
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, ctx.Close()) }()
	q := ctx.Queue()
	res.Device = ctx.Devices()[0].Name

	r := rand.New(rand.NewPCG(1, 2))
	ha, hb := make([]float32, n*n), make([]float32, n*n)
	for i := range ha {
		ha[i], hb[i] = r.Float32()*2-1, r.Float32()*2-1
	}
	a, err := rt.NewBuffer[float32](ctx, n*n)
	if err != nil {
		return res, err
	}
	b, err := rt.NewBuffer[float32](ctx, n*n)
	if err != nil {
		return res, err
	}
	c, err := rt.NewBuffer[float32](ctx, n*n)
	if err != nil {
		return res, err
	}
	if err := errors.Join(a.Write(q, ha), b.Write(q, hb)); err != nil {
		return res, err
	}
	// One multiply with tile size tile: the launch's own TILE, and the
	// work-group size that it needs.
	mul := func(q *rt.Queue, tile int32) error {
		m := Mul{A: a, B: b, C: c, N: int32(n), Tile: TILE.Of(tile)}
		return m.Enqueue(q, rt.Range2(n, n).WithLocal(int(tile), int(tile)))
	}
	before := ctx.Stats().Cache
	winner, err := TILE.Tune(q, mul)
	if err != nil {
		return res, err
	}
	after := ctx.Stats().Cache
	res.Winner, res.Timed = winner, int(after.Tuned-before.Tuned)
	res.Cached = after.TuneRecords > before.TuneRecords
	res.Default = TILE.Value(ctx)
	// The product with the winner, checked against Go.
	if err := mul(q, winner); err != nil {
		return res, err
	}
	got := make([]float32, n*n)
	if err := c.Read(q, got); err != nil {
		return res, err
	}
	res.MaxErr = maxRelErr(got, ha, hb, n)
	res.OK = res.MaxErr < 1e-4
	if !res.OK {
		return res, fmt.Errorf("product wrong: max relative error %g", res.MaxErr)
	}
	if benchReps > 0 {
		res.Bench, err = bench(ctx, q, mul, winner, n)
	}
	return res, err
}

// benchReps is the -bench flag.
var benchReps int

// candidates are TILE's, as its directive declares them.
var candidates = []int32{4, 8, 16, 32, 64}

// bench times benchReps multiplies with every candidate that runs on the
// device, and marks the winner, the default and the slowest.
func bench(ctx *rt.Context, q *rt.Queue, mul func(*rt.Queue, int32) error, winner int32, n int) ([]BenchRow, error) {
	var rows []BenchRow
	for _, tile := range candidates {
		if err := mul(q, tile); err != nil { // warm up; a tile the device refuses is left out
			continue
		}
		row, err := timeRuns(q, func(q *rt.Queue) error { return mul(q, tile) }, n)
		if err != nil {
			return rows, err
		}
		row.Tile = tile
		switch {
		case tile == winner && tile == TILE.Value(nil):
			row.Role = "winner, default"
		case tile == winner:
			row.Role = "winner"
		case tile == TILE.Value(nil):
			row.Role = "default"
		}
		rows = append(rows, row)
	}
	slow := 0
	for i := range rows {
		if rows[i].Median > rows[slow].Median {
			slow = i
		}
	}
	if len(rows) > 0 && rows[slow].Role == "" {
		rows[slow].Role = "slowest"
	}
	return rows, nil
}

// timeRuns times benchReps runs of mul, each between two markers by the
// device's timestamps.
func timeRuns(q *rt.Queue, mul func(*rt.Queue) error, n int) (BenchRow, error) {
	var ds []float64
	for range benchReps {
		m0, err := q.Marker()
		if err != nil {
			return BenchRow{}, err
		}
		if err := mul(q); err != nil {
			return BenchRow{}, err
		}
		m1, err := q.Marker()
		if err != nil {
			return BenchRow{}, err
		}
		t0, err0 := m0.Timing()
		t1, err1 := m1.Timing()
		if err := errors.Join(err0, err1); err != nil {
			return BenchRow{}, err
		}
		ds = append(ds, float64(t1.Ended-t0.Ended)/1e3)
		m0.Release()
		m1.Release()
	}
	slices.Sort(ds)
	med := ds[len(ds)/2]
	return BenchRow{Median: med, Min: ds[0], Max: ds[len(ds)-1], GFLOPS: 2 * float64(n) * float64(n) * float64(n) / (med * 1e3)}, nil
}

// maxRelErr checks rows of got against a Go product, every row for a
// small matrix and 64 spread rows for a large one; the error is relative
// to the sum of the magnitudes of the terms.
func maxRelErr(got, a, b []float32, n int) float64 {
	step := max(1, n/64)
	worst := 0.0
	for i := 0; i < n; i += step {
		for j := range n {
			var sum, mag float64
			for k := range n {
				p := float64(a[i*n+k]) * float64(b[k*n+j])
				sum += p
				mag += math.Abs(p)
			}
			worst = max(worst, math.Abs(float64(got[i*n+j])-sum)/max(mag, 1e-30))
		}
	}
	return worst
}
