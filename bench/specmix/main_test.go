package main

import (
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
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

// TestLaunchAllocs: a generated Enqueue that gives K its own value, whose
// instance is parked, allocates nothing, as one that gives none.
func TestLaunchAllocs(t *testing.T) {
	testenv.RequireDevice(t)
	ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(testenv.Backend()), Device: testenv.Device()})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	out, err := rt.NewBuffer[int32](ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []rt.Spec[int32]{K.Of(3), {}} {
		l := Launch{Out: out, K: k}
		if err := l.Enqueue(q, rt.Range1(items)); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { l.Enqueue(q, rt.Range1(items)) }); n != 0 {
			t.Errorf("K %v: %v allocations a launch; want 0", k, n)
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
}
