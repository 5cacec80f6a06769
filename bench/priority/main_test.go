package main

import (
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
)

// TestRun runs the measurement on PoCL with small sizes: every request
// verified in every phase, the flooded phases met by completed long
// kernels, and the queues reported at normal, since PoCL has no
// priorities.
func TestRun(t *testing.T) {
	testenv.RequireDevice(t)
	rep, err := Run(Options{Backend: "cpu", N: 10, LongMS: 10, Waves: 1, Depth: 2})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("%v (%+v)", err, rep)
	}
	t.Logf("%+v", rep)
	for _, ph := range []struct {
		name    string
		lat     Latency
		flooded bool
	}{{"idle", rep.Idle, false}, {"normal", rep.Normal, true}, {"priority", rep.Priority, true}} {
		if ph.lat.N != 10 || ph.lat.P50 <= 0 || ph.lat.P50 > ph.lat.P99 || ph.lat.P99 > ph.lat.Max {
			t.Errorf("%s: %+v, want 10 requests with 0 < p50 <= p99 <= max", ph.name, ph.lat)
		}
		if flooded := ph.lat.Longs > 0; flooded != ph.flooded {
			t.Errorf("%s: %d long kernels completed, want some: %v", ph.name, ph.lat.Longs, ph.flooded)
		}
	}
	if rep.RequestRunsAt != "normal" || rep.FloodRunsAt != "normal" {
		t.Errorf("on PoCL the queues run at %s and %s, want normal", rep.RequestRunsAt, rep.FloodRunsAt)
	}
	if rep.LongIters == 0 || rep.LongMS <= 0 {
		t.Errorf("calibration: %d iterations, %v ms", rep.LongIters, rep.LongMS)
	}
}

// TestSummarize: the percentiles are nearest-rank.
func TestSummarize(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Microsecond)
	}
	if got, want := summarize(lat), (Latency{N: 100, P50: 50, P99: 99, Max: 100}); got != want {
		t.Errorf("summarize(1..100 µs) = %+v, want %+v", got, want)
	}
	if got, want := summarize([]time.Duration{7 * time.Microsecond}), (Latency{N: 1, P50: 7, P99: 7, Max: 7}); got != want {
		t.Errorf("summarize(7 µs) = %+v, want %+v", got, want)
	}
}
