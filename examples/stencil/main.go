// Command stencil runs Rodinia's Hotspot thermal simulation on the device
// that DGEN_DEVICE selects, allocating each launch's output inside the time
// loop, and verifies it against a Go reference. Every launch but raw's goes
// through the generated Step.Enqueue; the modes differ in how they get each
// launch's output buffer:
//
//	tagged    from a //dgen:alloc site: the allocator's tagged free list
//	untagged  from the allocator's untagged size-class pool
//	driver    a fresh driver buffer each launch, released after
//	swap      Rodinia's hand-written double buffer
//	raw       swap's double buffer on rt/raw's calls (SetArg, Submit),
//	          with no event per launch: the yardstick for the others
//
// Usage:
//
//	stencil [-size 512] [-iters 360] [-pyramid 1] [-alloc all] [-reps 1] [-graph] [-json] [-seed N]
//
// With -graph every mode but raw records two time steps (a ping-pong pair)
// into a command graph once and replays it (rt.Graph); the result equals
// the run without graphs bit for bit. As CuPy's graph mode, the recording
// and a first launch come before the timer (record_us).
//
// With -json it prints one JSON object per mode and repetition, with keys
// device, mode, size, iters, pyramid, rep, launches, seconds, us_per_iter,
// record_us, driver_allocs, allocs_after_first, reuses, max_err (null when
// the result is not finite), ok (true only if verified) and digest (a hash
// of the result's bits: with a fixed -seed, equal digests mean results
// equal bit for bit, across runs, builds and options); without, a table of
// the modes side by side. The exit status is 1 if a run fails or does not
// match the reference.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends" // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
)

// Tolerance is the largest difference from the Go reference, in kelvin,
// that verifies: float32 rounding (division and contraction differ between
// OpenCL compilers) over hundreds of steps.
const Tolerance = 1e-2

// Record is one run, as printed with -json.
type Record struct {
	Device           string  `json:"device"`
	Mode             string  `json:"mode"`
	Size             int     `json:"size"`
	Iters            int     `json:"iters"`
	Pyramid          int     `json:"pyramid"`
	Rep              int     `json:"rep"`
	Launches         int     `json:"launches"`
	Seconds          float64 `json:"seconds"`
	UsPerIter        float64 `json:"us_per_iter"`
	RecordUs         float64 `json:"record_us,omitempty"`
	DriverAllocs     uint64  `json:"driver_allocs"`
	AllocsAfterFirst uint64  `json:"allocs_after_first"`
	Reuses           uint64  `json:"reuses"`
	Graph            bool    `json:"graph"`
	MaxErr           float64 `json:"-"`
	// MaxErrJSON is MaxErr, null where it is not finite (JSON has no Inf).
	MaxErrJSON *float64 `json:"max_err"`
	OK         bool     `json:"ok"`
	Digest     string   `json:"digest"`
}

func main() {
	size := flag.Int("size", 512, "grid edge: the chip is size x size cells")
	iters := flag.Int("iters", 360, "time steps")
	pyramid := flag.Int("pyramid", 1, "time steps per launch (1 to 7)")
	mode := flag.String("alloc", "all", "tagged, untagged, driver, swap, raw, or all; a comma-separated list runs several")
	reps := flag.Int("reps", 1, "runs of each mode")
	asJSON := flag.Bool("json", false, "print one JSON object per run")
	graph := flag.Bool("graph", false, "record two time steps into a command graph once and replay it (every mode but raw)")
	verify := flag.Bool("verify", true, "compare with the Go reference")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the runs to `file`")
	seed := flag.Uint64("seed", 0, "seed of the inputs (0: a new one each run)")
	flag.Parse()
	if *cpuProfile != "" {
		stop, err := startProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "stencil:", err)
			os.Exit(1)
		}
		defer stop()
	}
	recs, err := run(*size, *iters, *pyramid, *mode, *reps, *verify, *graph, *seed, func(r Record) {
		if *asJSON {
			if !math.IsInf(r.MaxErr, 0) && !math.IsNaN(r.MaxErr) {
				r.MaxErrJSON = &r.MaxErr
			}
			b, err := json.Marshal(r)
			if err != nil {
				fmt.Fprintln(os.Stderr, "stencil:", err)
				return
			}
			fmt.Println(string(b))
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "stencil:", err)
		exit(1)
	}
	if !*asJSON {
		printTable(os.Stdout, recs)
	}
	for _, r := range recs {
		if !r.OK && *verify {
			fmt.Fprintf(os.Stderr, "stencil: mode %s: max error %g K against the Go reference (tolerance %g)\n", r.Mode, r.MaxErr, Tolerance)
			exit(1)
		}
	}
}

func parseModes(s string) ([]string, error) {
	if s == "all" {
		return Modes, nil
	}
	var ms []string
	for _, m := range strings.Split(s, ",") {
		if !slices.Contains(Modes, m) {
			return nil, fmt.Errorf("-alloc=%s: unknown mode %q (want %s or all)", s, m, strings.Join(Modes, ", "))
		}
		ms = append(ms, m)
	}
	return ms, nil
}

func run(size, iters, pyramid int, mode string, reps int, verify, graph bool, seed uint64, emit func(Record)) ([]Record, error) {
	modes, err := parseModes(mode)
	if err != nil {
		return nil, err
	}
	if size <= 0 || iters <= 0 || reps <= 0 {
		return nil, fmt.Errorf("-size %d, -iters %d, -reps %d: each must be positive", size, iters, reps)
	}
	ctx, err := rt.Open()
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	dev := ctx.Devices()[0]
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	temp, power := Inputs(size, seed)
	sim, err := NewSim(ctx, power, size, size)
	if err != nil {
		return nil, err
	}
	defer sim.Close()
	sim.Graph = graph
	// Warm up: the first launch compiles the kernel for the device on
	// some drivers (PoCL); no mode should pay it.
	if _, err := sim.Run("swap", temp, pyramid, pyramid); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	var want []float32
	if verify {
		want = Reference(temp, power, size, size, iters, sim.p)
	}
	var recs []Record
	for rep := range reps {
		for _, m := range modes {
			res, err := sim.Run(m, temp, iters, pyramid)
			if err != nil {
				return recs, fmt.Errorf("mode %s: %w", m, err)
			}
			r := Record{
				Device: dev.Name, Mode: m, Size: size, Iters: iters, Pyramid: pyramid, Rep: rep,
				Launches: res.Launches, Seconds: res.Elapsed.Seconds(),
				UsPerIter:    float64(res.Elapsed.Nanoseconds()) / 1e3 / float64(iters),
				RecordUs:     float64(res.Record.Nanoseconds()) / 1e3,
				Digest:       Digest(res.Temp),
				DriverAllocs: res.DriverAllocs, AllocsAfterFirst: res.AllocsAfterFirst, Reuses: res.Reuses,
				Graph: graph && m != "raw",
			}
			if verify {
				r.MaxErr = MaxAbsErr(res.Temp, want)
				r.OK = r.MaxErr <= Tolerance
			}
			emit(r)
			recs = append(recs, r)
		}
	}
	return recs, nil
}

func printTable(w *os.File, recs []Record) {
	if len(recs) == 0 {
		return
	}
	r0 := recs[0]
	fmt.Fprintf(w, "Hotspot %dx%d, %d steps, pyramid %d, on %s\n", r0.Size, r0.Size, r0.Iters, r0.Pyramid, r0.Device)
	fmt.Fprintf(w, "%-9s %4s %10s %11s %14s %18s %7s %10s %s\n", "mode", "rep", "seconds", "us/step", "driver allocs", "allocs after 1st", "reuses", "max err K", "ok")
	for _, r := range recs {
		fmt.Fprintf(w, "%-9s %4d %10.4f %11.1f %14d %18d %7d %10.2g %v\n", r.Mode, r.Rep, r.Seconds, r.UsPerIter, r.DriverAllocs, r.AllocsAfterFirst, r.Reuses, r.MaxErr, r.OK)
	}
}

// stopProfile ends the CPU profile that -cpuprofile started, if any.
var stopProfile = func() {}

// exit stops the CPU profile and exits with code.
func exit(code int) {
	stopProfile()
	os.Exit(code)
}

// startProfile starts a CPU profile written to path and returns the
// function that stops it and closes the file.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	stopProfile = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
	return stopProfile, nil
}
