// Command suite runs the programs of the table in which Futhark published
// the effect of its allocator (canny, k-means, crypt, OptionPricing, BFS,
// LUD; Hotspot) on dgen, and prints per program and dataset the speedup of
// each allocator policy over allocating every buffer from the driver,
// beside Futhark's figure.
//
// Each program is written as a Go user writes one with dgen: //dgen:program,
// //dgen:kernel specs with dgen:"out" fields, //dgen:alloc sites, device
// globals and a specialization constant; it allocates inside its loops as
// Futhark's generated code does. Every mode runs in its own context, in
// one process: DGEN_ALLOC_POLICY's values (full, tagged) and driver, where
// every allocation is rt.NewBuffer and every free a driver release.
//
// Usage:
//
//	suite [-gpu] [-reps 5] [-programs all] [-modes driver,full,tagged] [-json FILE] [-seed N]
//
// For each program and dataset it makes fresh inputs, runs once in every
// mode (building programs and leaving the free lists as Futhark's benchmark
// runs leave them), verifies that run against the Go reference, then times
// -reps runs, the modes interleaved, from inputs on the device to the result
// on the device with the queue drained, and verifies the last timed run
// too. The speedup of a mode is the median
// of the per-repetition ratios driver/mode, with their range. -gpu selects
// the table's sizes instead of the small ones meant for PoCL. With -json
// every (program, dataset, mode) is also written as a JSON line. The exit
// status is 1 if a run fails or does not verify.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/dgen-go/dgen/rt/backends" // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
)

// Row is one program, dataset and mode of the table, as written with
// -json. Times are in milliseconds.
type Row struct {
	Program  string  `json:"program"`
	Dataset  string  `json:"dataset"`
	Size     Size    `json:"size"`
	Mode     string  `json:"mode"`
	Device   string  `json:"device"`
	Reps     int     `json:"reps"`
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	MaxMs    float64 `json:"max_ms"`
	// Speedup is the median of driver/mode over the repetitions, with
	// SpeedupMin and SpeedupMax their range; 1 for the driver mode.
	Speedup    float64 `json:"speedup"`
	SpeedupMin float64 `json:"speedup_min"`
	SpeedupMax float64 `json:"speedup_max"`
	// DriverAllocs counts driver buffers created by one timed run.
	DriverAllocs uint64 `json:"driver_allocs_per_run"`
	// Futhark is Futhark's published speedup on the dataset (0: none).
	Futhark  float64 `json:"futhark"`
	Verified bool    `json:"verified"`
}

// Options select what a table run measures.
type Options struct {
	GPU      bool     // the table's sizes
	Reps     int      // timed runs per mode
	Programs []string // empty: all
	Modes    []string // the first must be DriverMode
	Seed     uint64
	Pinned   bool // per-iteration flags read into pinned memory (Env.Pinned)
}

func main() {
	var o Options
	flag.BoolVar(&o.GPU, "gpu", false, "the table's sizes (for a GPU) instead of small ones")
	flag.IntVar(&o.Reps, "reps", 5, "timed runs of each mode")
	progs := flag.String("programs", "all", "comma-separated program names, or all")
	modes := flag.String("modes", strings.Join(Modes(), ","), "comma-separated modes, driver first")
	jsonPath := flag.String("json", "", "also write every row as a JSON line to this file")
	flag.BoolVar(&o.Pinned, "pinned", false, "read the per-iteration flags of k-means, BFS and Canny into pinned memory")
	flag.Uint64Var(&o.Seed, "seed", uint64(time.Now().UnixNano()), "seed of the inputs")
	flag.Parse()
	if *progs != "all" {
		o.Programs = strings.Split(*progs, ",")
	}
	o.Modes = strings.Split(*modes, ",")
	var jw io.Writer
	if *jsonPath != "" {
		f, err := os.Create(*jsonPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "suite:", err)
			os.Exit(1)
		}
		defer f.Close()
		jw = f
	}
	if err := Table(os.Stdout, jw, o); err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
}

// Table measures what o selects and prints the table to w, and the rows
// as JSON lines to jw if it is not nil.
func Table(w, jw io.Writer, o Options) error {
	if len(o.Modes) == 0 || o.Modes[0] != DriverMode {
		return fmt.Errorf("modes %q: the first must be %q, the baseline", o.Modes, DriverMode)
	}
	if o.Reps < 1 {
		return fmt.Errorf("%d repetitions: want at least 1", o.Reps)
	}
	progs := Programs
	if len(o.Programs) > 0 {
		progs = nil
		for _, name := range o.Programs {
			p, err := Lookup(name)
			if err != nil {
				return err
			}
			progs = append(progs, p)
		}
	}
	var envs []*Env
	defer func() {
		for _, e := range envs {
			e.Close()
		}
	}()
	for _, m := range o.Modes {
		e, err := OpenEnv(m)
		if err != nil {
			return err
		}
		e.Pinned = o.Pinned
		envs = append(envs, e)
	}
	fmt.Fprintf(w, "device %s; seed %d; %d timed runs per mode; times in ms, median [min-max]; speedup = driver/mode per run, median [min-max]\n\n",
		envs[0].Q.Device().Name, o.Seed, o.Reps)
	fmt.Fprintf(w, "%-14s %-28s %-10s", "program", "dataset", "size")
	for _, m := range o.Modes {
		fmt.Fprintf(w, " %-24s", m)
	}
	fmt.Fprintf(w, " %s\n", "futhark")
	var failed []string
	for _, p := range progs {
		for _, ds := range p.Datasets {
			rows, err := measure(envs, p, ds, o)
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s/%s: %v", p.Name, ds.Name, err))
				fmt.Fprintf(w, "%-14s %-28s FAILED: %v\n", p.Name, ds.Name, err)
				continue
			}
			printRow(w, p, ds, rows)
			for _, r := range rows {
				if jw != nil {
					b, err := json.Marshal(r)
					if err != nil {
						return err
					}
					fmt.Fprintf(jw, "%s\n", b)
				}
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of the table's cells failed:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	return nil
}

// printRow prints one program and dataset: each mode's time and, for the
// policies, the speedup over the driver.
func printRow(w io.Writer, p Program, ds Dataset, rows []Row) {
	s := rows[0].Size
	size := fmt.Sprint(s.N)
	if s.M != 0 {
		size += fmt.Sprintf("/%d", s.M)
	}
	fmt.Fprintf(w, "%-14s %-28s %-10s", p.Name, ds.Name, size)
	for _, r := range rows {
		cell := fmt.Sprintf("%.3g [%.3g-%.3g]", r.MedianMs, r.MinMs, r.MaxMs)
		if r.Mode != DriverMode {
			cell = fmt.Sprintf("%.2fx [%.2f-%.2f]", r.Speedup, r.SpeedupMin, r.SpeedupMax)
		}
		fmt.Fprintf(w, " %-24s", cell)
	}
	fut := "-"
	if ds.Futhark > 0 {
		fut = fmt.Sprintf("%.2fx", ds.Futhark)
	}
	fmt.Fprintf(w, " %s\n", fut)
}

// measure runs one program on one dataset in every env: a verified
// warm-up run each, then o.Reps timed runs, the modes interleaved.
func measure(envs []*Env, p Program, ds Dataset, o Options) ([]Row, error) {
	size := ds.Small
	if o.GPU {
		size = ds.GPU
	}
	cases := make([]Case, len(envs))
	defer func() {
		for _, c := range cases {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i, e := range envs {
		c, err := p.New(e, size, o.Seed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Mode, err)
		}
		cases[i] = c
		if err := c.Run(); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Mode, err)
		}
		if err := c.Verify(); err != nil {
			return nil, fmt.Errorf("%s: does not verify: %w", e.Mode, err)
		}
	}
	times := make([][]float64, len(envs))
	allocs := make([]uint64, len(envs))
	for range o.Reps {
		for i, e := range envs {
			before := e.Ctx.Stats().Alloc.DriverAllocs
			start := time.Now()
			if err := cases[i].Run(); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Mode, err)
			}
			times[i] = append(times[i], float64(time.Since(start))/1e6)
			allocs[i] = e.Ctx.Stats().Alloc.DriverAllocs - before
		}
	}
	for i, c := range cases { // the last timed run used recycled memory
		if err := c.Verify(); err != nil {
			return nil, fmt.Errorf("%s: last timed run does not verify: %w", envs[i].Mode, err)
		}
	}
	rows := make([]Row, len(envs))
	for i, e := range envs {
		ratios := make([]float64, o.Reps)
		for r := range ratios {
			ratios[r] = times[0][r] / times[i][r]
		}
		t := slices.Sorted(slices.Values(times[i]))
		slices.Sort(ratios)
		rows[i] = Row{Program: p.Name, Dataset: ds.Name, Size: size, Mode: e.Mode, Device: e.Q.Device().Name, Reps: o.Reps,
			MedianMs: median(t), MinMs: t[0], MaxMs: t[len(t)-1],
			Speedup: median(ratios), SpeedupMin: ratios[0], SpeedupMax: ratios[len(ratios)-1],
			DriverAllocs: allocs[i], Futhark: ds.Futhark, Verified: true}
	}
	return rows, nil
}

// median returns the median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
