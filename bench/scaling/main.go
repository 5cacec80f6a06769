// Command scaling measures how rt serves many goroutines at once, against
// C with as many pthreads, in one process: each goroutine (thread) has a
// queue (stream) of its own, and all share one context. Three workloads:
//
//   - launch: the 64-item kernel touch64, launched back to back with no
//     event (a generated Enqueue, way "rt"; rt/raw's Submit, "raw"; C's
//     clEnqueueNDRangeKernel or cuLaunchKernel; and the cgo floor, a C
//     function called once per launch, "floor": floor.go); and the
//     paired ways "rt|floor" and "raw|floor", whose goroutines alternate
//     blocks of launches (-pair) through rt and through the floor, timing
//     each, which resolve a difference of 1% where separate windows
//     resolve 10% (paired.go); and "ring", whose goroutines write launch
//     records into a ring that a C thread of its own launches (ring.go);
//   - request: two buffers of N floats from allocation sites (way "site")
//     or from rt.Alloc (way "alloc"), a blocking write, axpb, a blocking
//     read, both buffers freed; C keeps its buffers and does the rest;
//   - serve: the same request as a server runs it, G requests in flight at
//     once, each timed from when it was queued: on the Go side a goroutine
//     per request, started as one ends, that takes a queue of the
//     context's pool for the request (way "pool": Context.AcquireQueue and
//     ReleaseQueue) or uses the context's one queue (way "shared"); on the
//     C side a pool of G threads, each with its queue and buffers, that
//     take the requests from a queue that the main thread keeps full.
//
// For each goroutine count G, each round runs every way for a window in
// turn, C first on even rounds and last on odd ones, and prints a JSON line
// per block; the end prints per G the median (min–max) over rounds of each
// way's throughput ratio to C (and, in the launch loop, to the cgo floor),
// its throughput, the request latency
// percentiles, the fewest and most requests a goroutine completed as a
// fraction of the mean, and rt's driver allocations during the windows.
//
//	scaling -backend cuda|opencl|cpu [-g 1,2,4,8,16] [-rounds 5] [-window 200ms] [-n 65536] [-pair 1024]
//
// cuda and opencl run on the first NVIDIA GPU (rt/cuda or rt/opencl; C on
// the CUDA driver API or OpenCL); cpu runs both on PoCL.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/dgen-go/dgen/rt/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

//go:embed scaling.cl
var source string

// latCap is how many request latencies each worker keeps per window.
const latCap = 4096

type workload int

// The workloads; their values are cside.c's modes.
const (
	launchLoop workload = iota
	requestLoop
	serveLoop
)

func (w workload) String() string { return [...]string{"launch", "request", "serve"}[w] }

// result is what the workers of one window did.
type result struct {
	elapsed time.Duration
	counts  []int64   // per worker
	lat     []float64 // request latencies in µs
	allocs  uint64    // rt's driver allocations during the window
	// pairPerSec is a paired way's floor throughput in its own blocks
	// (paired.go); elapsed is then rt's share of the window.
	pairPerSec float64
}

func (r result) total() int64 {
	var n int64
	for _, c := range r.counts {
		n += c
	}
	return n
}

func (r result) perSecond() float64 { return float64(r.total()) / r.elapsed.Seconds() }

// way is one way of running a workload.
type way struct {
	name string
	w    workload
	run  func(g int, window time.Duration) (result, error)
}

func main() {
	backend := flag.String("backend", "cpu", "cuda, opencl (an NVIDIA GPU) or cpu (PoCL)")
	gs := flag.String("g", "1,2,4,8,16", "goroutine counts")
	rounds := flag.Int("rounds", 5, "rounds per goroutine count")
	window := flag.Duration("window", 200*time.Millisecond, "how long each way runs per round")
	n := flag.Int("n", 65536, "floats per request buffer (65536: 256 KiB)")
	only := flag.String("only", "", "run only this workload (launch, request or serve)")
	flag.IntVar(&pairBlock, "pair", pairBlock, "launches per turn in the paired ways (paired.go)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	scrape := flag.Duration("metrics", 0, "register rt/metrics's collector and scrape it this often while the ways run (0: no collector)")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "scaling:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*backend, *gs, *rounds, *window, *n, *only, *scrape); err != nil {
		fmt.Fprintln(os.Stderr, "scaling:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(backend, gs string, rounds int, window time.Duration, n int, only string, scrape time.Duration) error {
	var counts []int
	for _, f := range strings.Split(gs, ",") {
		g, err := strconv.Atoi(f)
		if err != nil || g < 1 || g > 64 {
			return fmt.Errorf("goroutine count %q: want 1 to 64", f)
		}
		counts = append(counts, g)
	}
	cfg := rt.Config{Device: "gpu", Backend: rt.Backend(backend)}
	if backend == "cpu" {
		cfg = rt.Config{Device: "cpu", Backend: rt.BackendOpenCL}
	}
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return err
	}
	defer ctx.Close()
	if scrape > 0 {
		defer scrapeMetrics(ctx, scrape)()
	}
	c, err := openC(backend == "cuda", backend == "cpu", source, n)
	if err != nil {
		return err
	}
	g := &goSide{ctx: ctx, n: n}
	ways := []way{
		{"C", launchLoop, func(k int, w time.Duration) (result, error) { return c.run(launchLoop, k, w), nil }},
		{"rt", launchLoop, g.launches},
		{"raw", launchLoop, g.rawLaunches},
		{"floor", launchLoop, g.floorLaunches},
		{"ring", launchLoop, g.ringLaunches},
		{"rt|floor", launchLoop, g.paired((*goSide).rtLauncher)},
		{"raw|floor", launchLoop, g.paired((*goSide).rawLauncher)},
		{"C", requestLoop, func(k int, w time.Duration) (result, error) { return c.run(requestLoop, k, w), nil }},
		{"site", requestLoop, g.requests(siteAlloc)},
		{"alloc", requestLoop, g.requests(poolAlloc)},
		{"C", serveLoop, func(k int, w time.Duration) (result, error) { return c.run(serveLoop, k, w), nil }},
		{"pool", serveLoop, g.serve(false)},
		{"shared", serveLoop, g.serve(true)},
	}
	if only != "" {
		ways = slices.DeleteFunc(ways, func(w way) bool { return w.w.String() != only })
	}
	fmt.Printf("# scaling: backend %s, device %s, windows of %v, %d rounds, GOMAXPROCS %d, %d CPUs\n",
		backend, ctx.Devices()[0].Name, window, rounds, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if slices.ContainsFunc(ways, func(w way) bool { return w.w == launchLoop }) {
		gen, raw, err := g.launchAllocs(20000)
		if err != nil {
			return fmt.Errorf("allocations per launch: %w", err)
		}
		fmt.Printf("# Go heap allocations per launch, one goroutine (testing.AllocsPerRun's count): generated Enqueue %g, rt/raw's Submit %g\n", gen, raw)
	}
	var sum summary
	for _, k := range counts {
		for _, w := range ways { // warm-up: builds, allocator blocks
			if _, err := w.run(k, window); err != nil {
				return fmt.Errorf("%s %s, %d goroutines: %w", w.w, w.name, k, err)
			}
		}
		// Every goroutine's buffers in use at once, as a service's warm-up
		// at full load: the free lists hold what the most concurrent
		// moment of a window needs.
		for _, a := range []allocator{siteAlloc, poolAlloc} {
			if err := g.fill(k, a); err != nil {
				return fmt.Errorf("warm-up of %d goroutines' buffers: %w", k, err)
			}
		}
		for round := range rounds {
			order := slices.Clone(ways)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, w := range order {
				r, err := w.run(k, window)
				if err != nil {
					return fmt.Errorf("%s %s, %d goroutines: %w", w.w, w.name, k, err)
				}
				sum.add(block{Workload: w.w.String(), Way: w.name, G: k, Round: round}, r)
			}
		}
	}
	sum.print(os.Stdout, counts)
	return nil
}

// block is one window's JSON line.
type block struct {
	Workload string  `json:"workload"`
	Way      string  `json:"way"`
	G        int     `json:"g"`
	Round    int     `json:"round"`
	PerSec   float64 `json:"per_sec"`
	P50      float64 `json:"p50_us,omitempty"`
	P99      float64 `json:"p99_us,omitempty"`
	Fewest   float64 `json:"fewest"` // the fewest a worker did, over the mean
	Most     float64 `json:"most"`
	Allocs   uint64  `json:"driver_allocs"`
	Floor    float64 `json:"floor_per_sec,omitempty"` // a paired way's floor (paired.go)
}

func (b *block) fill(r result) {
	b.PerSec, b.Floor = r.perSecond(), r.pairPerSec
	if len(r.lat) > 0 {
		slices.Sort(r.lat)
		b.P50, b.P99 = r.lat[len(r.lat)/2], r.lat[len(r.lat)*99/100]
	}
	mean := float64(r.total()) / float64(len(r.counts))
	if mean > 0 {
		b.Fewest = float64(slices.Min(r.counts)) / mean
		b.Most = float64(slices.Max(r.counts)) / mean
	}
	b.Allocs = r.allocs
}

type summary struct{ blocks []block }

func (s *summary) add(b block, r result) {
	b.fill(r)
	line, _ := json.Marshal(b)
	fmt.Println(string(line))
	s.blocks = append(s.blocks, b)
}

// scrapeMetrics registers rt/metrics's collector of ctx and gathers it
// every interval, as a Prometheus server scrapes a service, until the
// function it returns is called, which prints how many scrapes ran.
func scrapeMetrics(ctx *rt.Context, interval time.Duration) (stop func()) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(ctx, "scaling"))
	done := make(chan struct{})
	scrapes := make(chan int)
	go func() {
		n := 0
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if _, err := reg.Gather(); err != nil {
					fmt.Fprintln(os.Stderr, "scaling: scrape:", err)
				}
				n++
			case <-done:
				scrapes <- n
				return
			}
		}
	}()
	return func() {
		close(done)
		fmt.Printf("# metrics: rt/metrics's collector registered and scraped every %v: %d scrapes\n", interval, <-scrapes)
	}
}
