// Command priority measures what queue priorities (rt.QueueConfig.Priority)
// do for a latency-sensitive request beside a batch job on one device:
// a goroutine floods one queue with long kernels (spin, about -long-ms
// each, -depth of them in flight), while the request loop launches a
// short kernel (tick) on another queue, waits for it and reads it back,
// -n times, -gap apart. Each request's latency is the time from its
// enqueue to its completion (Finish); its result is verified after.
//
//	priority -backend cpu|cuda|opencl [-n 500] [-long-ms 5] [-waves 64] [-depth 8] [-gap 1ms]
//
// It measures three phases in one process, on one context: idle (no
// flood; the request queue at PriorityHigh), normal (the flood and the
// requests on queues at PriorityNormal) and priority (the flood at
// PriorityLow, the requests at PriorityHigh), and prints one JSON object:
// each phase's p50, p99 and max latency in microseconds, with the long
// kernels completed meanwhile; the priorities the queues run at
// (Queue.Priority: normal where the device has none, as PoCL, and the
// flood's on CUDA, whose default is its least priority); and p99_ratio,
// the priority phase's p99 over the idle p99. Issue 54's goal on CUDA is
// a p99_ratio of at most 2.
//
// A long kernel has -waves times as many work-items as the device runs at
// once (2048 per compute unit), so that it is many short waves of
// work-groups between which the device can start a request's: no
// priority preempts a work-group that runs. Its loop count is calibrated
// at start so that one takes about -long-ms alone.
//
// cuda and opencl run on the first NVIDIA GPU (rt/cuda or rt/opencl); cpu
// on PoCL, which has no priorities, so that its phases normal and priority
// differ only by chance. The exit status is 1 when a request's result is
// wrong or a launch fails.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dgen-go/dgen/bench/internal/benchenv"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// tickItems is the work-items of a request's kernel.
const tickItems = 256

// Options are the command's flags.
type Options struct {
	Backend string
	N       int           // requests per phase
	LongMS  float64       // the target duration of one long kernel, alone
	Waves   int           // a long kernel's work-items, in device-fulls
	Depth   int           // long kernels in flight
	Gap     time.Duration // between requests
}

// Latency is a phase's request latencies, in microseconds.
type Latency struct {
	N     int     `json:"n"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	Max   float64 `json:"max_us"`
	Longs int64   `json:"long_kernels"` // long kernels completed during the phase
}

// Report is what the command prints.
type Report struct {
	Backend   string  `json:"backend"`
	Device    string  `json:"device"`
	LongItems int     `json:"long_items"`
	LongIters uint32  `json:"long_iters"`
	LongMS    float64 `json:"long_ms"` // one long kernel alone, measured
	// RequestRunsAt and FloodRunsAt are the priorities the priority
	// phase's queues run at (Queue.Priority).
	RequestRunsAt string  `json:"request_runs_at"`
	FloodRunsAt   string  `json:"flood_runs_at"`
	Idle          Latency `json:"idle"`
	Normal        Latency `json:"normal"`
	Priority      Latency `json:"priority"`
	// P99Ratio is Priority.P99 / Idle.P99, and NormalRatio Normal.P99 /
	// Idle.P99.
	P99Ratio    float64 `json:"p99_ratio"`
	NormalRatio float64 `json:"normal_p99_ratio"`
	Error       string  `json:"error,omitempty"`
}

func main() {
	var o Options
	flag.StringVar(&o.Backend, "backend", "cpu", "cuda, opencl (an NVIDIA GPU) or cpu (PoCL)")
	flag.IntVar(&o.N, "n", 500, "requests per phase")
	flag.Float64Var(&o.LongMS, "long-ms", 5, "milliseconds of one long kernel alone")
	flag.IntVar(&o.Waves, "waves", 64, "a long kernel's work-items, in multiples of what the device runs at once")
	flag.IntVar(&o.Depth, "depth", 8, "long kernels in flight")
	flag.DurationVar(&o.Gap, "gap", time.Millisecond, "time between requests")
	flag.Parse()
	rep, err := Run(o)
	if err != nil {
		rep.Error = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	if err != nil {
		os.Exit(1)
	}
}

// Run measures the three phases.
func Run(o Options) (Report, error) {
	rep := Report{Backend: o.Backend}
	if o.N < 1 || o.LongMS <= 0 || o.Waves < 1 || o.Depth < 1 || o.Gap < 0 {
		return rep, fmt.Errorf("-n %d -long-ms %v -waves %d -depth %d -gap %v: want positive counts and durations", o.N, o.LongMS, o.Waves, o.Depth, o.Gap)
	}
	cfg, err := benchenv.Config(o.Backend)
	if err != nil {
		return rep, err
	}
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return rep, err
	}
	defer ctx.Close()
	dev := ctx.Devices()[0]
	rep.Device = dev.Name
	rep.LongItems = max(dev.ComputeUnits, 1) * 2048 * o.Waves
	queue := func(p rt.Priority) *rt.Queue {
		if err != nil {
			return nil
		}
		var q *rt.Queue
		q, err = ctx.NewQueueConfig(dev, rt.QueueConfig{Priority: p})
		return q
	}
	high, low, normalReq, normalFlood := queue(rt.PriorityHigh), queue(rt.PriorityLow), queue(rt.PriorityNormal), queue(rt.PriorityNormal)
	if err != nil {
		return rep, err
	}
	rep.RequestRunsAt, rep.FloodRunsAt = high.Priority().String(), low.Priority().String()
	sink, err := rt.NewBuffer[uint32](ctx, 1)
	if err != nil {
		return rep, err
	}
	defer sink.Free()
	spin := &Spin{Out: sink}
	if spin.Iters, rep.LongMS, err = calibrate(low, spin, rep.LongItems, o.LongMS); err != nil {
		return rep, err
	}
	rep.LongIters = spin.Iters
	for _, ph := range []struct {
		lat          *Latency
		req, flooded *rt.Queue
	}{
		{&rep.Idle, high, nil},
		{&rep.Normal, normalReq, normalFlood},
		{&rep.Priority, high, low},
	} {
		if *ph.lat, err = phase(o, ph.req, ph.flooded, *spin, rep.LongItems); err != nil {
			return rep, err
		}
	}
	if rep.Idle.P99 > 0 {
		rep.P99Ratio = rep.Priority.P99 / rep.Idle.P99
		rep.NormalRatio = rep.Normal.P99 / rep.Idle.P99
	}
	return rep, nil
}

// calibrate finds the loop count at which one long kernel of items takes
// about ms alone on q, and returns it with the time one takes at it.
func calibrate(q *rt.Queue, spin *Spin, items int, ms float64) (uint32, float64, error) {
	warm := *spin
	warm.Iters = 1
	if err := errors.Join(warm.Enqueue(q, rt.Range1(items)), q.Finish()); err != nil { // builds the program
		return 0, 0, err
	}
	iters := uint32(64)
	var took float64
	for range 8 {
		s := *spin
		s.Iters = iters
		start := time.Now()
		if err := s.Enqueue(q, rt.Range1(items)); err != nil {
			return 0, 0, err
		}
		if err := q.Finish(); err != nil {
			return 0, 0, err
		}
		took = float64(time.Since(start)) / float64(time.Millisecond)
		if took > 0.8*ms && took < 1.25*ms {
			break
		}
		next := float64(iters) * ms / max(took, 0.001)
		iters = uint32(min(max(next, 1), 1<<30))
	}
	return iters, took, nil
}

// phase measures o.N requests on req while, unless flooded is nil, a
// goroutine keeps o.Depth long kernels in flight on flooded.
func phase(o Options, req, flooded *rt.Queue, spin Spin, items int) (Latency, error) {
	var (
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		longs    atomic.Int64
		floodErr error
	)
	if flooded != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			floodErr = flood(flooded, spin, items, o.Depth, stop, &longs)
		}()
	}
	lat, err := requests(o, req, &longs, flooded != nil)
	close(stop)
	wg.Wait()
	lat.Longs = longs.Load()
	return lat, errors.Join(err, floodErr)
}

// flood keeps depth long kernels in flight on q until stop is closed,
// counting those completed in done.
func flood(q *rt.Queue, spin Spin, items, depth int, stop <-chan struct{}, done *atomic.Int64) error {
	ring := make([]*rt.Event, 0, depth)
	defer func() {
		q.Finish()
		for _, ev := range ring {
			ev.Release()
		}
	}()
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if len(ring) == depth {
			err := ring[0].Wait()
			ring[0].Release()
			ring = slices.Delete(ring, 0, 1)
			if err != nil {
				return err
			}
			done.Add(1)
		}
		ev, err := spin.EnqueueEvent(q, rt.Range1(items))
		if err != nil {
			return err
		}
		ring = append(ring, ev)
	}
}

// requests launches o.N short kernels on q, each after o.Gap, timing
// each from its enqueue to its completion and verifying it after; with
// flooded, it first waits for the flood to have completed a long kernel,
// so that every request meets a queue of them.
func requests(o Options, q *rt.Queue, longs *atomic.Int64, flooded bool) (Latency, error) {
	out, err := rt.NewBuffer[int32](q.Context(), tickItems)
	if err != nil {
		return Latency{}, err
	}
	defer out.Free()
	got := make([]int32, tickItems)
	tick := &Tick{Out: out}
	// The first request builds the kernel: outside the measurement.
	if err := errors.Join(tick.Enqueue(q, rt.Range1(tickItems)), q.Finish()); err != nil {
		return Latency{}, err
	}
	for flooded && longs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	lat := make([]time.Duration, 0, o.N)
	for i := range o.N {
		time.Sleep(o.Gap)
		tick.Value = int32(i)
		start := time.Now()
		if err := tick.Enqueue(q, rt.Range1(tickItems)); err != nil {
			return Latency{}, err
		}
		if err := q.Finish(); err != nil {
			return Latency{}, err
		}
		lat = append(lat, time.Since(start))
		if err := out.Read(q, got); err != nil {
			return Latency{}, err
		}
		for j, v := range got {
			if v != int32(i+j) {
				return Latency{}, fmt.Errorf("request %d: out[%d] = %d, want %d", i, j, v, i+j)
			}
		}
	}
	return summarize(lat), nil
}

// summarize returns the percentiles of lat, which it sorts.
func summarize(lat []time.Duration) Latency {
	slices.Sort(lat)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	at := func(q float64) float64 { return us(lat[max(int(math.Ceil(q*float64(len(lat))))-1, 0)]) } // nearest rank
	return Latency{N: len(lat), P50: at(0.50), P99: at(0.99), Max: us(lat[len(lat)-1])}
}
