package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/dgen-go/dgen/rt"
)

// plain runs j's iterations as generated launches, on a view of q that
// gives them j's shape: the launches that the shape's graph replaces.
func (s *Service) plain(q *rt.Queue, b *buffers, j Job) error {
	v, err := q.WithSpec(j.spec()...)
	if err != nil {
		return err
	}
	cmds := b.iteration(s, j.Shape, int32(len(j.Points)/j.D))
	for range j.Iters {
		for _, cmd := range cmds {
			if err := cmd(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// benchConfig is what bench measures: jobs of n points of one shape, each
// of iters iterations, perRound of them in each of rounds rounds, at each
// number of concurrent requests of conc.
type benchConfig struct {
	Shape
	n, iters, rounds, perRound int
	conc                       []int
	ahead                      int // Config.MaxQueueAhead (0 means 4)
}

// modes are the ways bench runs a job's iterations: the shape's graph, or
// plain launches.
var modes = []struct {
	name string
	run  func(s *Service) func(q *rt.Queue, b *buffers, j Job) error
}{
	{"graph", func(*Service) func(*rt.Queue, *buffers, Job) error { return nil }},
	{"plain", func(s *Service) func(*rt.Queue, *buffers, Job) error { return s.plain }},
}

// bench measures the jobs per second of s at each concurrency of c, with
// the graph and with plain launches in turn each round, checks every
// job's result against Reference, and writes one line per concurrency and
// mode to w: the median and the range over the rounds.
func bench(ctx context.Context, w io.Writer, s *Service, c benchConfig) error {
	jobs, want := c.jobs()
	for _, conc := range c.conc {
		rates := make([][]float64, len(modes))
		for range c.rounds {
			for m, mode := range modes {
				start := time.Now()
				if err := runJobs(ctx, s, jobs, want, conc, c.perRound, mode.run(s)); err != nil {
					return fmt.Errorf("%s, %d at once: %w", mode.name, conc, err)
				}
				rates[m] = append(rates[m], float64(c.perRound)/time.Since(start).Seconds())
			}
		}
		var med [2]float64
		for m, mode := range modes {
			slices.Sort(rates[m])
			med[m] = rates[m][len(rates[m])/2]
			fmt.Fprintf(w, "kmeans %s conc=%d N=%d D=%d K=%d iters=%d ahead=%d: %.1f jobs/s median (min %.1f, max %.1f) over %d rounds of %d jobs, every job verified\n",
				mode.name, conc, c.n, c.D, c.K, c.iters, c.ahead, med[m], rates[m][0], rates[m][len(rates[m])-1], c.rounds, c.perRound)
		}
		fmt.Fprintf(w, "kmeans conc=%d: graph/plain %.2fx (medians)\n", conc, med[0]/med[1])
	}
	return nil
}

// jobs returns four jobs of c's shape and their results in Go.
func (c benchConfig) jobs() ([]Job, []Result) {
	jobs := make([]Job, 4)
	want := make([]Result, len(jobs))
	for i := range jobs {
		jobs[i] = NewJob(c.Shape, c.n, c.iters, uint64(i))
		want[i] = Reference(jobs[i])
	}
	return jobs, want
}

// runJobs runs total jobs, conc at a time, each of jobs in turn, with run
// (nil: the graph), and checks each result against want's.
func runJobs(ctx context.Context, s *Service, jobs []Job, want []Result, conc, total int, run func(*rt.Queue, *buffers, Job) error) error {
	var mu sync.Mutex
	next, errs := 0, []error(nil)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= total {
					return
				}
				k := i % len(jobs)
				got, err := s.cluster(ctx, jobs[k], run)
				if err == nil {
					err = compare(got, want[k])
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("job %d: %w", i, err))
					next = total
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// compare returns an error naming the first difference between a job's
// result and the reference's.
func compare(got *Result, want Result) error {
	for i := range want.Centroids {
		if got.Centroids[i] != want.Centroids[i] {
			return fmt.Errorf("centroid coordinate %d = %d, Go's %d", i, got.Centroids[i], want.Centroids[i])
		}
	}
	for i := range want.Labels {
		if got.Labels[i] != want.Labels[i] {
			return fmt.Errorf("point %d in cluster %d, Go's %d", i, got.Labels[i], want.Labels[i])
		}
	}
	return nil
}
