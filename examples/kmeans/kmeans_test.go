package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/stats"
)

// shapes are the variants the tests' services serve, and maxPoints their
// most points per job.
var shapes = []Shape{{D: 4, K: 3}, {D: 16, K: 8}}

const maxPoints = 700

// openService opens a context on PoCL, unless DGEN_DEVICE says otherwise,
// and a service of shapes on it.
func openService(t *testing.T) (*rt.Context, *Service) {
	t.Helper()
	testenv.RequireDevice(t)
	if testenv.Device() == "" {
		t.Setenv("DGEN_DEVICE", "cpu")
	}
	gpu, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	t.Cleanup(func() { gpu.Close() })
	s, err := NewService(context.Background(), gpu, maxPoints, shapes...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return gpu, s
}

// TestClusterExact runs jobs of each shape, with the graph and with plain
// launches, and compares every label and centroid with Reference's. The
// first job of each shape, after NewService built it, builds and loads
// nothing.
func TestClusterExact(t *testing.T) {
	gpu, s := openService(t)
	dup := NewJob(shapes[0], 300, 1, 9)
	copy(dup.Init[dup.D:2*dup.D], dup.Init[:dup.D]) // centroid 1 is centroid 0: its cluster is empty
	tests := []struct {
		name string
		job  Job
	}{
		{"the most points", NewJob(shapes[1], maxPoints, 10, 1)},
		{"fewer points than the range", NewJob(shapes[1], 77, 7, 2)},
		{"another shape", NewJob(shapes[0], 500, 10, 3)},
		{"one iteration", NewJob(shapes[0], 64, 1, 4)},
		{"an empty cluster", dup},
	}
	before := gpu.Stats().Cache
	for i, tt := range tests {
		want := Reference(tt.job)
		for _, mode := range modes {
			got, err := s.cluster(context.Background(), tt.job, mode.run(s))
			if err == nil {
				err = compare(got, want)
			}
			if err != nil {
				t.Errorf("%s, %s: %v", tt.name, mode.name, err)
			}
			if i == 0 && mode.name == "graph" {
				if after := gpu.Stats().Cache; after != before {
					t.Errorf("the first job of a shape built ahead looked up programs: cache %+v before it, %+v after", before, after)
				}
			}
		}
	}
	if c := Reference(dup).Centroids[dup.D : 2*dup.D]; !slices.Equal(c, dup.Init[dup.D:2*dup.D]) {
		t.Errorf("the empty cluster's centroid moved in Go, to %v from %v", c, dup.Init[dup.D:2*dup.D])
	}
}

// TestClusterConcurrent runs 16 jobs at once, of both shapes, on the
// service's two graphs, each on a queue of its own, and checks each.
func TestClusterConcurrent(t *testing.T) {
	_, s := openService(t)
	const jobs = 16
	errs := make([]error, jobs)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := NewJob(shapes[i%2], 200+i*31, 5+i%4, uint64(100+i))
			got, err := s.Cluster(context.Background(), j)
			if err == nil {
				err = compare(got, Reference(j))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("job %d: %v", i, err)
		}
	}
}

// TestClusterMistakes checks that a job that does not fit fails with
// rt.ErrInvalidArgument before it runs, and that a cancelled request runs
// nothing.
func TestClusterMistakes(t *testing.T) {
	_, s := openService(t)
	ok := NewJob(shapes[0], 100, 3, 1)
	with := func(f func(j *Job)) Job {
		j := ok
		j.Points, j.Init = slices.Clone(ok.Points), slices.Clone(ok.Init)
		f(&j)
		return j
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		job  Job
		want error
	}{
		{"a shape not served", context.Background(), with(func(j *Job) { j.K = 5; j.Init = make([]int32, 5*j.D) }), rt.ErrInvalidArgument},
		{"too many points", context.Background(), NewJob(shapes[0], maxPoints+1, 1, 1), rt.ErrInvalidArgument},
		{"no points", context.Background(), with(func(j *Job) { j.Points = nil }), rt.ErrInvalidArgument},
		{"a partial point", context.Background(), with(func(j *Job) { j.Points = j.Points[:len(j.Points)-1] }), rt.ErrInvalidArgument},
		{"too few centroids", context.Background(), with(func(j *Job) { j.Init = j.Init[:j.D] }), rt.ErrInvalidArgument},
		{"a coordinate too large", context.Background(), with(func(j *Job) { j.Points[7] = MaxCoord + 1 }), rt.ErrInvalidArgument},
		{"a negative coordinate", context.Background(), with(func(j *Job) { j.Points[0] = -1 }), rt.ErrInvalidArgument},
		{"no iterations", context.Background(), with(func(j *Job) { j.Iters = 0 }), rt.ErrInvalidArgument},
		{"a cancelled request", cancelled, ok, context.Canceled},
	}
	for _, tt := range tests {
		if _, err := s.Cluster(tt.ctx, tt.job); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v; want an error wrapping %v", tt.name, err, tt.want)
		}
	}
	if _, err := NewService(context.Background(), s.gpu, MaxPoints+1); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("NewService of more than MaxPoints points: %v; want rt.ErrInvalidArgument", err)
	}
}

// TestClusterCancelled cancels a job of many iterations while it runs: it
// returns soon with the context's error, and the next job on the pool's
// queues, reusing its memory, is exact.
func TestClusterCancelled(t *testing.T) {
	_, s := openService(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.Cluster(ctx, NewJob(shapes[1], maxPoints, 1_000_000, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a job past its deadline: %v; want an error wrapping context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a job with a deadline of 50ms returned after %v", d)
	}
	j := NewJob(shapes[1], maxPoints, 10, 2)
	got, err := s.Cluster(context.Background(), j)
	if err == nil {
		err = compare(got, Reference(j))
	}
	if err != nil {
		t.Errorf("the job after the cancelled one: %v", err)
	}
}

// childStats is what TestFirstJobChild prints: the cache's counts after
// NewService and after the first job.
type childStats struct {
	Start, First stats.Cache
}

// TestFirstJobBuildsNothing starts fresh processes with an empty disk
// cache and then with the one the first left: in both, the first job
// after NewService builds nothing and loads nothing, and the second
// process's NewService builds nothing either.
func TestFirstJobBuildsNothing(t *testing.T) {
	testenv.RequireDevice(t)
	if testing.Short() {
		t.Skip("starts two processes that build programs")
	}
	dir := t.TempDir()
	for _, run := range []string{"empty", "warm"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFirstJobChild$", "-test.v")
		cmd.Env = append(os.Environ(), "DGEN_CACHE_DIR="+dir, "KMEANS_CHILD=1")
		if testenv.Device() == "" {
			cmd.Env = append(cmd.Env, "DGEN_DEVICE=cpu")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s disk cache: child: %v\n%s", run, err, out)
		}
		var s childStats
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "CHILD "); ok {
				err = json.Unmarshal([]byte(rest), &s)
			}
		}
		if err != nil || s.Start.MemHits == 0 {
			t.Fatalf("%s disk cache: no statistics (%v) in:\n%s", run, err, out)
		}
		t.Logf("%s disk cache: after NewService %+v", run, s.Start)
		if s.First != s.Start {
			t.Errorf("%s disk cache: the first job looked up programs: cache %+v after NewService, %+v after the job", run, s.Start, s.First)
		}
		if run == "empty" && s.Start.Builds != int64(len(shapes)) {
			t.Errorf("empty disk cache: NewService built %d programs; want %d", s.Start.Builds, len(shapes))
		}
		if run == "warm" && (s.Start.Builds != 0 || s.Start.DiskHits != int64(len(shapes))) {
			t.Errorf("warm disk cache: NewService built %d and loaded %d programs; want 0 and %d", s.Start.Builds, s.Start.DiskHits, len(shapes))
		}
	}
}

// TestFirstJobChild is TestFirstJobBuildsNothing's fresh process.
func TestFirstJobChild(t *testing.T) {
	if os.Getenv("KMEANS_CHILD") == "" {
		t.Skip("run by TestFirstJobBuildsNothing")
	}
	gpu, s := openService(t)
	var out childStats
	out.Start = gpu.Stats().Cache
	j := NewJob(shapes[1], 300, 3, 7)
	got, err := s.Cluster(context.Background(), j)
	if err == nil {
		err = compare(got, Reference(j))
	}
	if err != nil {
		t.Fatal(err)
	}
	out.First = gpu.Stats().Cache
	b, _ := json.Marshal(out)
	fmt.Printf("CHILD %s\n", b)
}
