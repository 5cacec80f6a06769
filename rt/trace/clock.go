package trace

import (
	"os"
	"strings"
	"sync"
	"time"
)

// The Tracer's clock. Where the CPU's time-stamp counter runs at a
// constant rate whatever the core's frequency and sleep state (the
// constant_tsc and nonstop_tsc flags of Linux's /proc/cpuinfo, on amd64),
// the Tracers that Open gives subscribers read it (a few nanoseconds) and
// scale it by a rate measured once per process against the monotonic clock
// (2 ms, at the first such Open); elsewhere, and for Tracers made by New,
// Now reads the monotonic clock (time.Since: some 20 ns, a quarter of a
// traced command's host cost). The item clock=mono of Open's spec forces
// the monotonic clock.

// tscClock is the calibration of the time-stamp counter.
type tscClock struct {
	ok      bool
	perTick float64 // nanoseconds per tick
}

var (
	tscOnce sync.Once
	tsc     tscClock
)

// calibrationSpan is how long the time-stamp counter is compared with the
// monotonic clock, once per process, by the first Tracer.
const calibrationSpan = 2 * time.Millisecond

// tscCalibrate measures the rate of the time-stamp counter, where it can
// serve as a clock.
func tscCalibrate() tscClock {
	if !haveTSC {
		return tscClock{}
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return tscClock{}
	}
	for _, flag := range []string{" constant_tsc", " nonstop_tsc"} {
		if !strings.Contains(string(info), flag) {
			return tscClock{}
		}
	}
	t0, c0 := sample()
	var t1 time.Duration
	var c1 uint64
	for {
		t1, c1 = sample()
		if t1-t0 >= calibrationSpan {
			break
		}
	}
	if c1 <= c0 {
		return tscClock{}
	}
	return tscClock{ok: true, perTick: float64(t1-t0) / float64(c1-c0)}
}

var epoch = time.Now()

// sample reads the monotonic clock and the counter as close together as it
// can: the pair with the tightest counter bracket of a few tries.
func sample() (time.Duration, uint64) {
	var best uint64 = ^uint64(0)
	var at time.Duration
	var mid uint64
	for range 5 {
		a := rdtsc()
		t := time.Since(epoch)
		b := rdtsc()
		if b-a < best {
			best, at, mid = b-a, t, a+(b-a)/2
		}
	}
	return at, mid
}

// clockStart returns the counter reading of a new Tracer's clock zero, or
// 0 where the monotonic clock is used.
func clockStart() (uint64, float64) {
	tscOnce.Do(func() { tsc = tscCalibrate() })
	if !tsc.ok {
		return 0, 0
	}
	return rdtsc(), tsc.perTick
}
