package main

import (
	"testing"
	"time"
)

// TestRing runs the ring way on PoCL and checks that every launch a
// goroutine published ran once: each floor's buffer counts its launches.
func TestRing(t *testing.T) {
	g := openSides(t)
	for _, goroutines := range []int{1, 2} {
		openFloors(goroutines)
		before := make([]int64, goroutines)
		for i := range before {
			before[i] = floorCount(i)
		}
		r, err := g.ringLaunches(goroutines, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("%d goroutines: %v", goroutines, err)
		}
		for i, n := range r.counts {
			ran := floorCount(i) - before[i]
			if n == 0 || ran != n {
				t.Errorf("%d goroutines: goroutine %d published %d launches, its floor ran %d", goroutines, i, n, ran)
			}
		}
	}
}
