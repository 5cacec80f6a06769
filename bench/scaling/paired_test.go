package main

import (
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// TestPaired runs the paired ways on PoCL and checks that each reports
// both sides: the launches over rt's share of the window, and the floor's
// throughput in its own blocks, the two shares together the window.
func TestPaired(t *testing.T) {
	g := openSides(t)
	const window = 100 * time.Millisecond
	defer func(b int) { pairBlock = b }(pairBlock)
	pairBlock = 64 // PoCL's launches are slower: many pairs a window
	for _, w := range []struct {
		name string
		mk   func(*goSide, *rt.Queue) (launcher, error)
	}{{"rt|floor", (*goSide).rtLauncher}, {"raw|floor", (*goSide).rawLauncher}} {
		// A warm-up window: the first launch builds the kernel, which on a
		// cold cache takes longer than the window.
		if _, err := g.paired(w.mk)(1, time.Millisecond); err != nil {
			t.Fatalf("%s, warm-up: %v", w.name, err)
		}
		for _, goroutines := range []int{1, 2} {
			r, err := g.paired(w.mk)(goroutines, window)
			if err != nil {
				t.Fatalf("%s, %d goroutines: %v", w.name, goroutines, err)
			}
			n := float64(r.total()) / float64(goroutines) // launches per goroutine, each side
			rtShare := n / r.perSecond() * float64(goroutines)
			floorShare := n / r.pairPerSec * float64(goroutines)
			if r.total() == 0 || r.pairPerSec <= 0 || rtShare <= 0 || floorShare <= 0 {
				t.Fatalf("%s, %d goroutines: %d launches, rt %v/s, floor %v/s: want both sides", w.name, goroutines, r.total(), r.perSecond(), r.pairPerSec)
			}
			// Each goroutine's blocks fill the window (the last pair runs
			// past it), and each side takes part of it: the same launch
			// costs the two sides of the same order.
			sum := rtShare + floorShare
			if d := time.Duration(sum * float64(time.Second)); d < window*9/10 || d > window*3/2 || rtShare > 0.9*sum || floorShare > 0.9*sum {
				t.Errorf("%s, %d goroutines: rt's share %.1f ms and the floor's %.1f ms of a %v window", w.name, goroutines, rtShare*1e3, floorShare*1e3, window)
			}
		}
	}
}

// openSides opens both sides on PoCL, skipping where it is missing, and
// returns the Go side; the context closes with the test.
func openSides(t *testing.T) *goSide {
	t.Helper()
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu", Backend: rt.BackendOpenCL})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
	}
	t.Cleanup(func() { ctx.Close() })
	if _, err := openC(false, true, source, 1024); err != nil {
		t.Skip(err)
	}
	return &goSide{ctx: ctx, n: 1024}
}
