// Command faultloop is a service whose kernels fault, to show what rt
// does then: G goroutines, each with a queue of its own on one context,
// serve requests (write a buffer, launch inc, read it back, check every
// element); every Nth request of the process launches bad instead, which
// writes 1 TiB past its buffer: a device fault on a GPU. Every goroutine
// must get an error wrapping rt.ErrDeviceFault within a second, and none
// may hang. The loop then closes the context, opens a new one with the
// same configuration and goes on, until Open fails because every backend
// has lost the device, which it reports with rt's restart message.
//
//	faultloop [-g 16] [-every 200] [-n 4096] [-faults 0] [-backend auto] [-first auto] [-sync] [-prewarm=true] [-probe]
//
// Neither NVIDIA backend recovers a faulted device in the same process,
// but each backend's fault is its own: under automatic selection (the
// default) the first context runs on rt/cuda, the second on NVIDIA's
// OpenCL, and the third Open fails, so the loop survives one fault in a
// process with both backends. -first opencl starts on NVIDIA's OpenCL
// instead (then rt/cuda comes second, loading the programs that -prewarm
// put in the persistent cache, since NVIDIA's OpenCL, rt/cuda's compiler,
// is lost with the first fault). -sync sets Config.SyncLaunches, under
// which the fault names exactly the faulting launch and the line of its
// Enqueue.
//
// Beside the goroutines, a health check polls Context.Health every
// millisecond, as a readiness probe would, until it reports the fault.
// With -probe, the goroutine that launched bad makes no call after it
// until Health reports the fault (or half of -hang passed): with -g 1,
// nothing but Health's own probe can notice the fault then.
//
// Each context ("epoch") prints a JSON line: its backend, the requests it
// served and verified, the time from the faulting launch to each
// goroutine's error (median and max), how many got it within a second,
// the time from the faulting launch, and from the first error a goroutine
// got, to the first Health that reported it, how long Close took, and
// whether the fault named bad (and, with -sync, its line); the last line
// sums up. The exit status is 0 when every goroutine got the fault within
// a second, Health reported it within a second of the faulting launch,
// none hung, every request was verified and Close returned the fault; 1
// otherwise, 2 on a hang.
//
// On a CPU device (PoCL) an out-of-bounds kernel ends the process: the
// command refuses to run there unless -allow-cpu.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// options are the command's flags.
type options struct {
	goroutines, every, n, faults int
	backend, first               string
	sync, prewarm, allowCPU      bool
	probe                        bool
	hang                         time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.goroutines, "g", 16, "goroutines, each with a queue of its own")
	flag.IntVar(&o.every, "every", 200, "every Nth request of the process launches the faulting kernel")
	flag.IntVar(&o.n, "n", 4096, "elements of each goroutine's buffer")
	flag.IntVar(&o.faults, "faults", 0, "stop after this many faults (0: until Open fails, at most 64)")
	flag.StringVar(&o.backend, "backend", "auto", "Config.Backend of every context: auto, cuda or opencl")
	flag.StringVar(&o.first, "first", "", "Config.Backend of the first context (default: -backend)")
	flag.BoolVar(&o.sync, "sync", false, "Config.SyncLaunches: the fault names the launch that faulted and its line")
	flag.BoolVar(&o.prewarm, "prewarm", true, "build the program on each backend before the first fault (into the persistent cache)")
	flag.BoolVar(&o.allowCPU, "allow-cpu", false, "run on a CPU device too, where the faulting kernel ends the process")
	flag.DurationVar(&o.hang, "hang", 10*time.Second, "a goroutine without an error this long after the fault hangs")
	flag.BoolVar(&o.probe, "probe", false, "the goroutine that launched the faulting kernel waits for Health to report it (with -g 1: only Health's probe can notice it)")
	flag.Parse()
	sum, err := run(o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultloop:", err)
	}
	switch {
	case sum.Hung:
		os.Exit(2)
	case err != nil || !sum.OK():
		os.Exit(1)
	}
}

// epoch is what one context did, printed as a JSON line.
type epoch struct {
	Epoch    int    `json:"epoch"`
	Backend  string `json:"backend"`
	Device   string `json:"device"`
	Requests int64  `json:"requests"` // served and verified
	Failed   int64  `json:"failed"`   // verified wrong, or failed otherwise than by the fault
	// FaultMS are the times from the faulting launch to each goroutine's
	// error, in milliseconds: median and max; Within1s counts those within
	// a second.
	FaultMSMedian float64 `json:"fault_to_error_ms_median"`
	FaultMSMax    float64 `json:"fault_to_error_ms_max"`
	Within1s      int     `json:"within_1s"`
	Goroutines    int     `json:"goroutines"`
	NoticedMS     float64 `json:"launch_to_noticed_ms"` // from the launch to DeviceFault.Time
	// UnhealthyMS is the time from the faulting launch to the first
	// Health that returned the fault (polled every millisecond), and
	// ErrorToUnhealthyMS from the first error a goroutine got to it
	// (negative where Health reported the fault first); both omitted
	// where Health did not report it. HealthPolls counts the Health calls.
	UnhealthyMS        *float64 `json:"launch_to_unhealthy_ms,omitempty"`
	ErrorToUnhealthyMS *float64 `json:"first_error_to_unhealthy_ms,omitempty"`
	HealthPolls        int      `json:"health_polls"`
	// EnqueueMS is how long the faulting Enqueue took to return: on its
	// queue's first launch of bad, the kernel object is made then (on
	// rt/cuda from the functions found when the module loaded: CUDA's
	// driver held a cuModuleGetFunction there up for over a minute while
	// other goroutines transferred). The times above start when it
	// returned.
	EnqueueMS float64 `json:"bad_enqueue_ms"`
	CloseMS   float64 `json:"close_ms"`
	CloseOK   bool    `json:"close_returned_fault"`
	NamesBad  bool    `json:"names_bad"`       // the fault lists bad among its launches
	NamesLine bool    `json:"names_line"`      // and the line of its Enqueue
	Exact     bool    `json:"exact"`           // DeviceFault.Exact
	Suspects  int     `json:"suspects"`        // launches listed, and omitted
	Fault     string  `json:"fault,omitempty"` // the fault, abridged
}

// summary is the last line.
type summary struct {
	FaultsSurvived int    `json:"faults_survived"` // faults after which a context opened again
	Faults         int    `json:"faults"`
	Requests       int64  `json:"requests_verified"`
	Failed         int64  `json:"requests_failed"`
	AllWithin1s    bool   `json:"all_within_1s"`
	Hung           bool   `json:"hung"`
	CloseOK        bool   `json:"close_returned_fault"`
	Stopped        string `json:"stopped"`

	// UnhealthyMSMax is the longest of the epochs' launch_to_unhealthy_ms,
	// and UnhealthyWithin1s whether every epoch's Health reported the
	// fault within a second of the faulting launch.
	UnhealthyMSMax    float64 `json:"launch_to_unhealthy_ms_max"`
	UnhealthyWithin1s bool    `json:"unhealthy_within_1s"`
}

// add sums up epoch ep.
func (s *summary) add(ep epoch) {
	s.Faults++
	s.Requests += ep.Requests
	s.Failed += ep.Failed
	s.AllWithin1s = s.AllWithin1s && ep.Within1s == ep.Goroutines
	s.Hung = s.Hung || ep.Within1s < 0
	s.CloseOK = s.CloseOK && ep.CloseOK
	if ep.UnhealthyMS != nil {
		s.UnhealthyMSMax = max(s.UnhealthyMSMax, *ep.UnhealthyMS)
	}
	s.UnhealthyWithin1s = s.UnhealthyWithin1s && ep.UnhealthyMS != nil && *ep.UnhealthyMS <= 1000
}

// OK reports whether the run showed what it should.
func (s summary) OK() bool {
	return s.AllWithin1s && s.UnhealthyWithin1s && !s.Hung && s.Failed == 0 && s.CloseOK && s.Faults > 0
}

// run runs the loop and prints an epoch line per context and the summary.
func run(o options, out io.Writer) (summary, error) {
	sum := summary{AllWithin1s: true, UnhealthyWithin1s: true, CloseOK: true}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := rt.ConfigFromEnv(os.Getenv) // DGEN_DEVICE, DGEN_CACHE_DIR, ... as rt.Open reads them
	if err != nil {
		return sum, err
	}
	if o.backend != "" {
		cfg.Backend = rt.Backend(o.backend)
	}
	cfg.SyncLaunches = cfg.SyncLaunches || o.sync
	cfg.Logger = log
	if o.prewarm {
		prewarm(cfg, log)
	}
	first := cfg
	if o.first != "" {
		first.Backend = rt.Backend(o.first)
	}
	maxFaults := o.faults
	if maxFaults <= 0 {
		maxFaults = 64
	}
	enc := json.NewEncoder(out)
	ctx, err := rt.OpenConfig(first)
	for i := 0; err == nil; i++ {
		if d := ctx.Devices()[0]; d.Type != rt.DeviceGPU && !o.allowCPU {
			ctx.Close()
			return sum, fmt.Errorf("%s is not a GPU: on a CPU (PoCL) the faulting kernel ends the process (-allow-cpu runs it anyway)", d)
		}
		ep := serve(ctx, o, i)
		enc.Encode(ep)
		sum.add(ep)
		if sum.Hung { // a goroutine hung: its context cannot be closed
			sum.Stopped = "a goroutine hangs"
			enc.Encode(sum)
			return sum, nil
		}
		if sum.Faults >= maxFaults {
			sum.Stopped = fmt.Sprintf("%d faults, as -faults asked", sum.Faults)
			enc.Encode(sum)
			return sum, nil
		}
		if ctx, err = rt.OpenConfig(cfg); err == nil {
			sum.FaultsSurvived++
		}
	}
	if errors.Is(err, rt.ErrDeviceFault) {
		sum.Stopped = err.Error()
		err = nil
	}
	enc.Encode(sum)
	return sum, err
}

// prewarm builds the program on each NVIDIA backend, so that a backend
// opened after a fault loads it from the persistent cache: rt/cuda
// compiles with NVIDIA's OpenCL, which a fault there takes away.
func prewarm(cfg rt.Config, log *slog.Logger) {
	for _, b := range []rt.Backend{rt.BackendCUDA, rt.BackendOpenCL} {
		c := cfg
		c.Backend = b
		ctx, err := rt.OpenConfig(c)
		if err == nil {
			err = errors.Join(Kernels.Build(context.Background(), ctx), ctx.Close())
		}
		if err != nil {
			log.Info("faultloop: prewarm", "backend", b, "err", err)
		}
	}
}

// state is what the goroutines of one epoch share.
type state struct {
	o          options
	served     atomic.Int64
	failed     atomic.Int64
	bad        atomic.Bool  // the epoch launched bad
	badAt      atomic.Int64 // when its Enqueue returned, in Unix nanoseconds
	badEnqueue atomic.Int64 // how long its Enqueue took, in nanoseconds
	badLine    atomic.Int64 // the line of its Enqueue
	badFile    atomic.Pointer[string]
	health     *healthWatch
}

// requests numbers requests across epochs, so that the faulting one is
// every Nth of the process.
var requests atomic.Int64

// outcome is how one goroutine's loop ended.
type outcome struct {
	err error
	at  time.Time
}

// healthWatch is an epoch's health check: a goroutine that calls
// Context.Health every millisecond until it returns an error, or stop is
// closed.
type healthWatch struct {
	done chan struct{} // closed when the goroutine returns
	// The goroutine writes the following fields before it closes done.
	at    time.Time // when Health first returned an error; zero if it did not
	err   error     // that error
	polls int
}

// watchHealth starts the health check of ctx.
func watchHealth(ctx *rt.Context, stop <-chan struct{}) *healthWatch {
	w := &healthWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			w.polls++
			if err := ctx.Health(); err != nil {
				w.at, w.err = time.Now(), err
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// serve runs an epoch on ctx: the goroutines serve until each got an
// error, and the health check polls until Health reports it; then it
// closes ctx.
func serve(ctx *rt.Context, o options, i int) epoch {
	d := ctx.Devices()[0]
	ep := epoch{Epoch: i, Backend: ctx.Backend(), Device: d.String(), Goroutines: o.goroutines}
	stop := make(chan struct{})
	s := &state{o: o, health: watchHealth(ctx, stop)}
	done := make(chan outcome, o.goroutines)
	for range o.goroutines {
		go func() { done <- s.worker(ctx) }()
	}
	var outs []outcome
	// A goroutine hangs when it has no error o.hang after the faulting
	// launch's Enqueue returned (or 10 × o.hang after the start, while it
	// has not).
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for len(outs) < o.goroutines {
		select {
		case r := <-done:
			outs = append(outs, r)
		case now := <-tick.C:
			from := start
			if s.bad.Load() && s.badAt.Load() != 0 {
				from = time.Unix(0, s.badAt.Load())
			} else if now.Sub(start) < 10*o.hang {
				continue
			}
			if now.Sub(from) < o.hang {
				continue
			}
			ep.Within1s = -1
			close(stop)
			// Where the goroutines wait says whose wait hangs.
			fmt.Fprintf(os.Stderr, "faultloop: %d goroutines without an error %v after the faulting launch of epoch %d (launched: %v); every goroutine's stack:\n", o.goroutines-len(outs), now.Sub(from).Round(time.Millisecond), i, s.bad.Load())
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
			return ep
		}
	}
	close(stop)
	<-s.health.done
	ep.Requests, ep.Failed = s.served.Load(), s.failed.Load()
	ep.EnqueueMS = float64(time.Duration(s.badEnqueue.Load()).Microseconds()) / 1000
	badAt := time.Unix(0, s.badAt.Load())
	var ms []float64
	for _, r := range outs {
		if !errors.Is(r.err, rt.ErrDeviceFault) {
			ep.Failed++
			fmt.Fprintln(os.Stderr, "faultloop: an error other than the fault:", r.err)
			continue
		}
		d := r.at.Sub(badAt)
		ms = append(ms, float64(d.Microseconds())/1000)
		if d <= time.Second {
			ep.Within1s++
		}
	}
	if len(ms) > 0 {
		slices.Sort(ms)
		ep.FaultMSMedian, ep.FaultMSMax = ms[len(ms)/2], ms[len(ms)-1]
	}
	ep.health(s.health, badAt, outs)
	var f *rt.DeviceFault
	if errors.As(ctx.Err(), &f) {
		ep.describe(f, s)
		ep.NoticedMS = float64(f.Time.Sub(badAt).Microseconds()) / 1000
	}
	t := time.Now()
	err := ctx.Close()
	ep.CloseMS = float64(time.Since(t).Microseconds()) / 1000
	ep.CloseOK = errors.Is(err, rt.ErrDeviceFault)
	return ep
}

// health fills in when the health check w reported the fault: after the
// faulting launch at badAt, and after the first of the goroutines' errors
// outs.
func (ep *epoch) health(w *healthWatch, badAt time.Time, outs []outcome) {
	ep.HealthPolls = w.polls
	if w.err == nil {
		fmt.Fprintln(os.Stderr, "faultloop: Health did not report the fault")
		return
	}
	if !errors.Is(w.err, rt.ErrDeviceFault) {
		fmt.Fprintln(os.Stderr, "faultloop: Health reported an error other than the fault:", w.err)
		return
	}
	ep.UnhealthyMS = msSince(badAt, w.at)
	var first time.Time
	for _, r := range outs {
		if errors.Is(r.err, rt.ErrDeviceFault) && (first.IsZero() || r.at.Before(first)) {
			first = r.at
		}
	}
	if !first.IsZero() {
		ep.ErrorToUnhealthyMS = msSince(first, w.at)
	}
}

// msSince returns the milliseconds from t to u, to the microsecond.
func msSince(t, u time.Time) *float64 {
	ms := float64(u.Sub(t).Microseconds()) / 1000
	return &ms
}

// describe fills in what the fault f says of the faulting launch.
func (ep *epoch) describe(f *rt.DeviceFault, s *state) {
	ep.Exact, ep.Suspects = f.Exact, len(f.Launches)+f.Omitted
	file := ""
	if p := s.badFile.Load(); p != nil {
		file = *p
	}
	for _, l := range f.Launches {
		if l.Kernel == "bad" {
			ep.NamesBad = true
			ep.NamesLine = ep.NamesLine || l.File == file && l.Line == int(s.badLine.Load())
		}
	}
	ep.Fault = f.Error()
	if len(ep.Fault) > 600 {
		ep.Fault = ep.Fault[:600] + "…"
	}
}

// worker serves requests on a queue of its own until one fails.
func (s *state) worker(ctx *rt.Context) outcome {
	q, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		return outcome{err, time.Now()}
	}
	buf, err := rt.NewBuffer[int32](ctx, s.o.n)
	if err != nil {
		return outcome{err, time.Now()}
	}
	defer buf.Free()
	host := make([]int32, s.o.n)
	for {
		r := requests.Add(1)
		if r%int64(s.o.every) == 0 && s.bad.CompareAndSwap(false, true) {
			if err := s.launchBad(q, buf); err != nil {
				return outcome{err, time.Now()}
			}
			if s.o.probe {
				return s.awaitHealth(q)
			}
		}
		if err := s.request(q, buf, host, r); err != nil {
			return outcome{err, time.Now()}
		}
	}
}

// launchBad launches the faulting kernel, noting when and from which line.
func (s *state) launchBad(q *rt.Queue, buf rt.Buffer[int32]) error {
	start := time.Now()
	_, file, line, _ := runtime.Caller(0)
	err := (&Bad{X: buf, N: 1}).Enqueue(q, rt.Range1(1)) // line+1
	now := time.Now()
	s.badEnqueue.Store(int64(now.Sub(start)))
	s.badAt.Store(now.UnixNano())
	s.badFile.Store(&file)
	s.badLine.Store(int64(line + 1))
	return err
}

// awaitHealth makes no call after the faulting launch until the health
// check reports the fault, and returns that as its outcome; after half of
// -hang without it, it finishes q to notice the fault itself.
func (s *state) awaitHealth(q *rt.Queue) outcome {
	t := time.NewTimer(s.o.hang / 2)
	defer t.Stop()
	select {
	case <-s.health.done: // the health check stops only on an error while a goroutine serves
		return outcome{s.health.err, s.health.at}
	case <-t.C:
		fmt.Fprintf(os.Stderr, "faultloop: Health did not report the fault %v after the faulting launch: finishing the queue\n", s.o.hang/2)
		return outcome{q.Finish(), time.Now()}
	}
}

// request serves request r: it writes the buffer, launches inc, reads the
// buffer back and checks every element. A wrong element counts as failed
// (and ends nothing: the loop goes on until an error).
func (s *state) request(q *rt.Queue, buf rt.Buffer[int32], host []int32, r int64) error {
	for i := range host {
		host[i] = int32(r) + int32(i)
	}
	if err := buf.Write(q, host); err != nil {
		return err
	}
	if err := (&Inc{X: buf, N: int32(len(host)), Add: 7}).Enqueue(q, rt.Range1(len(host))); err != nil {
		return err
	}
	if err := buf.Read(q, host); err != nil {
		return err
	}
	for i, v := range host {
		if v != int32(r)+int32(i)+7 {
			s.failed.Add(1)
			fmt.Fprintf(os.Stderr, "faultloop: request %d: element %d is %d, want %d\n", r, i, v, int32(r)+int32(i)+7)
			return nil
		}
	}
	s.served.Add(1)
	return nil
}
