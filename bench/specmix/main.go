// Command specmix checks that specialization-constant values per launch
// keep every launch to its own value under load, issue 44's goal: G
// goroutines (16) on one context, each with a queue of its own, launch one
// kernel in turn with each of V values of the constant K (4: 2, 3, 5, 7,
// ...) and, every V+1-th launch, with no value (the context's, the
// default 1), interleaved, for a duration; every result is read back and
// verified. With -tune, another goroutine re-tunes K again and again
// beside them (rt.Config.Retune: every candidate timed each time), on a
// queue of its own, its tuning function checking that its own launches
// ran with the candidate; the context's K must stay the default
// throughout. It prints one JSON object and exits 1 on any wrong result.
//
//	specmix -backend cpu|cuda|opencl [-g 16] [-values 4] [-duration 10s] [-tune]
//
// cuda and opencl run on the first NVIDIA GPU (rt/cuda or rt/opencl); cpu
// on PoCL.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dgen-go/dgen/bench/internal/benchenv"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// items is the work-items of a launch.
const items = 256

// Options are the command's flags.
type Options struct {
	Backend  string
	G        int
	Values   int
	Duration time.Duration
	Tune     bool
}

// Report is what the command prints.
type Report struct {
	Backend    string        `json:"backend"`
	Device     string        `json:"device"`
	G          int           `json:"goroutines"`
	Values     []int32       `json:"values"`
	Seconds    float64       `json:"seconds"`
	Launches   int64         `json:"launches"`          // verified launches, all goroutines
	PerValue   []int64       `json:"per_value"`         // by value, then the launches without one
	Wrong      int64         `json:"wrong"`             // results that were not the launch's value
	Errors     int64         `json:"errors"`            // launches that failed
	Tunings    int64         `json:"tunings"`           // complete Tune calls beside the launches
	TuneRuns   int64         `json:"tune_runs"`         // calls of the tuning function
	TuneWrong  int64         `json:"tune_wrong"`        // its launches that did not run with the candidate
	Winners    map[int32]int `json:"winners,omitempty"` // tunings won, by candidate
	DefaultK   int32         `json:"default_k"`         // the context's K at the end: 1
	FirstWrong string        `json:"first_wrong,omitempty"`
	Error      string        `json:"error,omitempty"`
}

func main() {
	var o Options
	flag.StringVar(&o.Backend, "backend", "cpu", "cuda, opencl (an NVIDIA GPU) or cpu (PoCL)")
	flag.IntVar(&o.G, "g", 16, "goroutines")
	flag.IntVar(&o.Values, "values", 4, "values of K (2, 3, 5, 7, 11, ...), besides launches without one")
	flag.DurationVar(&o.Duration, "duration", 10*time.Second, "how long the goroutines launch")
	flag.BoolVar(&o.Tune, "tune", false, "re-tune K beside the launches, again and again")
	flag.Parse()
	rep, err := Run(o)
	if err != nil {
		rep.Error = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	if err != nil || rep.Wrong != 0 || rep.Errors != 0 || rep.TuneWrong != 0 {
		os.Exit(1)
	}
}

// primes are the values of K the goroutines give, in order.
var primes = []int32{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}

// counters are what the goroutines count.
type counters struct {
	launches, wrong, errors, tunings, tuneRuns, tuneWrong atomic.Int64
	perValue                                              []atomic.Int64
	mu                                                    sync.Mutex
	first                                                 string
	winners                                               map[int32]int
}

func (c *counters) fail(format string, args ...any) {
	c.mu.Lock()
	if c.first == "" {
		c.first = fmt.Sprintf(format, args...)
	}
	c.mu.Unlock()
}

// Run runs the goroutines, and the tuner with o.Tune, for o.Duration.
func Run(o Options) (Report, error) {
	rep := Report{Backend: o.Backend, G: o.G}
	if o.G < 1 || o.Values < 1 || o.Values > len(primes) {
		return rep, fmt.Errorf("-g %d -values %d: want at least one goroutine and 1 to %d values", o.G, o.Values, len(primes))
	}
	rep.Values = primes[:o.Values]
	cfg, err := benchenv.Config(o.Backend)
	if err != nil {
		return rep, err
	}
	if o.Tune {
		cfg.Profiling, cfg.Retune = true, true // timing needs device timestamps; time every tuning
	}
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return rep, err
	}
	defer ctx.Close()
	rep.Device = ctx.Devices()[0].Name
	values := make([]rt.Spec[int32], 0, o.Values+1)
	for _, v := range rep.Values {
		values = append(values, K.Of(v))
	}
	values = append(values, rt.Spec[int32]{}) // the context's: the default
	c := &counters{perValue: make([]atomic.Int64, len(values)), winners: map[int32]int{}}
	// Build every variant first: the run is about launches.
	warm, err := rt.NewBuffer[int32](ctx, items)
	if err != nil {
		return rep, err
	}
	defer warm.Free()
	for _, v := range values {
		want, own := v.Get()
		if !own {
			want = K.Value(nil)
		}
		if err := launch(ctx.Queue(), warm, v, want); err != nil {
			return rep, err
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// spawn runs f on a queue of its own in a goroutine of its own.
	spawn := func(f func(q *rt.Queue)) error {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			close(stop)
			wg.Wait()
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(q)
		}()
		return nil
	}
	for g := range o.G {
		if err := spawn(func(q *rt.Queue) { worker(ctx, q, g, values, c, stop) }); err != nil {
			return rep, err
		}
	}
	if o.Tune {
		if err := spawn(func(q *rt.Queue) { tuner(ctx, q, c, stop) }); err != nil {
			return rep, err
		}
	}
	start := time.Now()
	time.Sleep(o.Duration)
	close(stop)
	rep.Seconds = time.Since(start).Seconds()
	wg.Wait()
	rep.Launches, rep.Wrong, rep.Errors = c.launches.Load(), c.wrong.Load(), c.errors.Load()
	rep.Tunings, rep.TuneRuns, rep.TuneWrong = c.tunings.Load(), c.tuneRuns.Load(), c.tuneWrong.Load()
	for i := range c.perValue {
		rep.PerValue = append(rep.PerValue, c.perValue[i].Load())
	}
	rep.Winners, rep.FirstWrong, rep.DefaultK = c.winners, c.first, K.Value(ctx)
	if rep.DefaultK != K.Value(nil) {
		return rep, fmt.Errorf("the context's K is %d after the run; want the default %d, which nothing asked to change", rep.DefaultK, K.Value(nil))
	}
	return rep, nil
}

// errWrong is a result that is not the launch's value.
var errWrong = errors.New("wrong result")

// launch launches the kernel on q into out with k (the zero Spec: the
// context's), reads the result back and checks that it ran with want.
func launch(q *rt.Queue, out rt.Buffer[int32], k rt.Spec[int32], want int32) error {
	if err := (&Launch{Out: out, K: k}).Enqueue(q, rt.Range1(items)); err != nil {
		return err
	}
	got := make([]int32, items)
	if err := out.Read(q, got); err != nil {
		return err
	}
	for i, v := range got {
		if v != int32(i)*want+7 {
			return fmt.Errorf("%w: out[%d] = %d, want %d (K=%d)", errWrong, i, v, int32(i)*want+7, want)
		}
	}
	return nil
}

// worker launches on q, in turn, with each of values (the last is the
// zero Spec: the context's K, the default), until stop is closed.
func worker(ctx *rt.Context, q *rt.Queue, g int, values []rt.Spec[int32], c *counters, stop <-chan struct{}) {
	out, err := rt.NewBuffer[int32](ctx, items)
	if err != nil {
		c.errors.Add(1)
		c.fail("goroutine %d: %v", g, err)
		return
	}
	defer out.Free()
	def := K.Value(nil)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		i := (g + n) % len(values)
		want, own := values[i].Get()
		if !own {
			want = def
		}
		err := launch(q, out, values[i], want)
		switch {
		case errors.Is(err, errWrong):
			c.wrong.Add(1)
			c.fail("goroutine %d, launch %d: %v", g, n, err)
		case err != nil:
			c.errors.Add(1)
			c.fail("goroutine %d, launch %d: %v", g, n, err)
		default:
			c.launches.Add(1)
			c.perValue[i].Add(1)
		}
	}
}

// tuner tunes K on q again and again until stop is closed. Its tuning
// function launches with the candidate, by value or leaving the field
// zero in turn, and checks the result.
func tuner(ctx *rt.Context, q *rt.Queue, c *counters, stop <-chan struct{}) {
	out, err := rt.NewBuffer[int32](ctx, items)
	if err != nil {
		c.errors.Add(1)
		c.fail("tuner: %v", err)
		return
	}
	defer out.Free()
	run := func(tq *rt.Queue, v int32) error {
		n := c.tuneRuns.Add(1)
		k := rt.Spec[int32]{} // the candidate, which the tuning queue applies
		if n%2 == 0 {
			k = K.Of(v)
		}
		err := launch(tq, out, k, v)
		if errors.Is(err, errWrong) {
			c.tuneWrong.Add(1)
			c.fail("tuning function, candidate %d: %v", v, err)
		}
		return err
	}
	tctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }() // stop a tuning under way
	for tctx.Err() == nil {
		w, err := K.TuneContext(tctx, q, run)
		if errors.Is(err, context.Canceled) {
			return
		}
		if err != nil {
			c.errors.Add(1)
			c.fail("tune: %v", err)
			return
		}
		c.tunings.Add(1)
		c.mu.Lock()
		c.winners[w]++
		c.mu.Unlock()
		if d := K.Value(ctx); d != K.Value(nil) {
			c.wrong.Add(1)
			c.fail("after a tuning the context's K is %d, not the default %d", d, K.Value(nil))
		}
	}
}
