package main

import (
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
)

// TestRun runs the command on PoCL for a second, with Tune beside the
// goroutines: every launch verified, none wrong, the context's K the
// default at the end. (rt's TestSpecGoroutines is the same without Tune.)
func TestRun(t *testing.T) {
	testenv.RequireDevice(t)
	for _, tune := range []bool{true} {
		rep, err := Run(Options{Backend: "cpu", G: 16, Values: 4, Duration: time.Second, Tune: tune})
		if err != nil {
			testenv.SkipWithoutDevice(t, err)
			t.Fatalf("tune %v: %v (%+v)", tune, err, rep)
		}
		t.Logf("tune %v: %d launches in %.1f s, per value %v, %d wrong, %d errors; %d tunings (%d runs, %d wrong), winners %v",
			tune, rep.Launches, rep.Seconds, rep.PerValue, rep.Wrong, rep.Errors, rep.Tunings, rep.TuneRuns, rep.TuneWrong, rep.Winners)
		if rep.Wrong != 0 || rep.Errors != 0 || rep.TuneWrong != 0 {
			t.Errorf("tune %v: %d wrong, %d errors, %d wrong in tuning; the first: %s", tune, rep.Wrong, rep.Errors, rep.TuneWrong, rep.FirstWrong)
		}
		for i, n := range rep.PerValue {
			if n == 0 {
				t.Errorf("tune %v: no launch with value %d of %v (the last: none)", tune, i, rep.Values)
			}
		}
		if tune && rep.TuneRuns == 0 {
			t.Errorf("the tuner never ran its function")
		}
	}
}
