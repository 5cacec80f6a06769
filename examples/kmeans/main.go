// Command kmeans clusters points with k-means on the device: the shape of
// dgen's issue 55, a service whose requests each run an iterative
// algorithm with a reduction. The service (kmeans.go) builds the variant
// of each shape it serves, (D, K), and records one iteration of it as a
// graph before it takes a request; each request acquires a queue bound to
// its context, launches the shape's graph once per iteration with its own
// buffers, and reads the result. Every figure is in integers, so that the
// device's result equals the Go reference's (reference.go) exactly.
//
// Without -bench, kmeans runs 16 jobs at once and checks each against
// Go. With -bench, it measures jobs per second at each -conc, with the
// graph and with the same iterations as plain generated launches, every
// job checked, and prints one line per concurrency and mode:
//
//	go run ./examples/kmeans -bench -n 20000 -d 16 -k 8 -iters 10
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"   // NVIDIA GPUs through CUDA's driver API, where libcuda loads
	_ "github.com/dgen-go/dgen/rt/opencl" // every OpenCL device, PoCL on the CPU among them
)

var (
	n        = flag.Int("n", 20000, "the points of a job")
	d        = flag.Int("d", 16, "the coordinates of a point (D)")
	k        = flag.Int("k", 8, "the clusters (K)")
	iters    = flag.Int("iters", 10, "the iterations of a job")
	doBench  = flag.Bool("bench", false, "measure jobs per second, with the graph and with plain launches")
	rounds   = flag.Int("rounds", 5, "with -bench, the rounds of each measurement")
	perRound = flag.Int("jobs", 200, "with -bench, the jobs of a round")
	conc     = flag.String("conc", "1,16", "with -bench, the numbers of concurrent requests, comma-separated")
	ahead    = flag.Int("ahead", 0, "the commands a request may have ahead of the host (Config.MaxQueueAhead; 0: DGEN_QUEUE_AHEAD's)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kmeans:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	c := benchConfig{Shape: Shape{D: *d, K: *k}, n: *n, iters: *iters, rounds: *rounds, perRound: *perRound}
	for _, f := range strings.Split(*conc, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return fmt.Errorf("-conc: %q is not a number of requests", f)
		}
		c.conc = append(c.conc, v)
	}
	if c.n < c.K || c.rounds < 1 || c.perRound < 1 {
		return fmt.Errorf("-n %d, -k %d, -rounds %d, -jobs %d: want at least -k points, a round and a job", c.n, c.K, c.rounds, c.perRound)
	}
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	if *ahead > 0 {
		cfg.MaxQueueAhead = *ahead
	}
	c.ahead = cfg.MaxQueueAhead
	gpu, err := rt.OpenConfig(cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, gpu.Close()) }()
	ctx := context.Background()
	s, err := NewService(ctx, gpu, c.n, c.Shape)
	if err != nil {
		return err
	}
	defer s.Close()
	if *doBench {
		return bench(ctx, os.Stdout, s, c)
	}
	const jobs = 16
	in, want := c.jobs()
	if err := runJobs(ctx, s, in, want, jobs, jobs, nil); err != nil {
		return err
	}
	fmt.Printf("kmeans: %d jobs at once of %d points, D=%d K=%d, %d iterations each, on one graph: every one verified against Go\n", jobs, c.n, c.D, c.K, c.iters)
	return nil
}
