package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// traceSettings are the tracing settings BenchmarkTraceCost compares, as
// DGEN_TRACE values without the file: "" is tracing off. A setting marked
// alone has its context open only during its own blocks: on CUDA, timing
// every command enables CUPTI's kernel records, which are process-wide and
// would slow the other contexts' launches too.
var traceSettings = []struct {
	name, opts string
	alone      bool
}{
	{"off", "", false},
	{"host", "perfetto", false},
	{"device16", "perfetto,device=16", false},
	{"deviceall", "perfetto,device=all", true},
}

// BenchmarkTraceCost measures what tracing costs Hotspot's tagged loop
// (one step per launch) with every setting in one process: one context per
// setting on the device DGEN_DEVICE and DGEN_BACKEND name, each running
// blocks of DGEN_BENCH_STEPS steps (default 2000) in turn, b.N rounds.
// Taking turns block by block puts the settings side by side within
// milliseconds, where separate processes drift apart by more than the
// overheads measured. It reports each setting's median µs per step over
// the rounds, with its minimum and maximum, and the median of the
// per-round overheads against off (a round's traced block against the
// untraced block next to it). DGEN_BENCH_SIZE sets the grid edge (default
// 512).
//
//	DGEN_DEVICE=gpu go test ./examples/stencil -run '^$' -bench TraceCost -benchtime 20x
func BenchmarkTraceCost(b *testing.B) {
	n, steps := benchEnv(b, "DGEN_BENCH_SIZE", 512), benchEnv(b, "DGEN_BENCH_STEPS", 2000)
	temp, power := Inputs(n, 1)
	sims := make([]*Sim, len(traceSettings))
	for i, ts := range traceSettings {
		if !ts.alone {
			sims[i], _ = openTracedSim(b, ts.opts, power, n)
		}
	}
	per := make([][]float64, len(traceSettings)) // µs per step, by setting, round by round
	for round := 0; b.Loop(); round++ {
		for j := range traceSettings {
			i := (round + j) % len(traceSettings) // each setting first in turn
			sim, closeSim := sims[i], func() {}
			if sim == nil {
				b.StopTimer()
				sim, closeSim = openTracedSim(b, traceSettings[i].opts, power, n)
				if _, err := sim.Run("tagged", temp, 20, 1); err != nil { // warm up
					b.Fatal(err)
				}
				b.StartTimer()
			}
			res, err := sim.Run("tagged", temp, steps, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			closeSim()
			b.StartTimer()
			per[i] = append(per[i], float64(res.Elapsed.Nanoseconds())/1e3/float64(steps))
		}
	}
	for i, ts := range traceSettings {
		med, lo, hi := medianRange(per[i])
		b.ReportMetric(med, ts.name+"-µs/step")
		b.ReportMetric(lo, ts.name+"-min")
		b.ReportMetric(hi, ts.name+"-max")
		if i > 0 {
			over := make([]float64, len(per[i]))
			for r := range over {
				over[r] = 100 * (per[i][r]/per[0][r] - 1)
			}
			m, _, _ := medianRange(over)
			b.ReportMetric(m, ts.name+"-overhead-%")
		}
	}
}

// openTracedSim opens a context from the environment, tracing with opts
// to a file in a temporary directory (none when opts is empty), and a
// Hotspot simulation of an n x n chip on it; both close with b, or when
// the function it returns is called.
func openTracedSim(b *testing.B, opts string, power []float32, n int) (*Sim, func()) {
	b.Helper()
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Trace = ""
	if opts != "" {
		kind, rest, _ := strings.Cut(opts, ",")
		cfg.Trace = kind + ":" + filepath.Join(b.TempDir(), "trace.json")
		if rest != "" {
			cfg.Trace += "," + rest
		}
	}
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		testenv.SkipWithoutDevice(b, err)
		b.Fatal(err)
	}
	sim, err := NewSim(ctx, power, n, n)
	if err != nil {
		ctx.Close()
		b.Fatal(err)
	}
	closeSim := sync.OnceFunc(func() {
		sim.Close()
		ctx.Close()
	})
	b.Cleanup(closeSim)
	return sim, closeSim
}

// medianRange returns the median, minimum and maximum of v.
func medianRange(v []float64) (med, lo, hi float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[0], s[len(s)-1]
}

func benchEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
