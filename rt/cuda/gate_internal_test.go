package cuda

import (
	"testing"
	"time"
)

// TestGate: a command passes an open gate at once; at a held gate it
// waits until every holder has reopened it, and at a gate that is never
// reopened for at most gateHold.
func TestGate(t *testing.T) {
	defer func(h time.Duration) { gateHold = h }(gateHold)
	gateHold = 300 * time.Millisecond
	tests := []struct {
		name    string
		holders int
		reopen  int           // holders that reopen the gate, after delay
		delay   time.Duration // before they do
		min     time.Duration // the least the pass takes
		max     time.Duration // the most
	}{
		{"Open", 0, 0, 0, 0, 50 * time.Millisecond},
		{"Reopened", 1, 1, 100 * time.Millisecond, 90 * time.Millisecond, 250 * time.Millisecond},
		{"TwoHolders", 2, 2, 100 * time.Millisecond, 90 * time.Millisecond, 250 * time.Millisecond},
		{"OneOfTwoHolders", 2, 1, 50 * time.Millisecond, 290 * time.Millisecond, 2 * time.Second},
		{"NeverReopened", 1, 0, 0, 290 * time.Millisecond, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := new(gate)
			var reopen []func()
			for range tt.holders {
				reopen = append(reopen, g.hold())
			}
			go func() {
				time.Sleep(tt.delay)
				for _, f := range reopen[:tt.reopen] {
					f()
				}
			}()
			start := time.Now()
			g.pass()
			if d := time.Since(start); d < tt.min || d > tt.max {
				t.Errorf("pass took %v, want %v to %v", d, tt.min, tt.max)
			}
			time.Sleep(tt.delay) // the reopening goroutine is done
			for _, f := range reopen[tt.reopen:] {
				f()
			}
			if n := g.closers.Load(); n != 0 {
				t.Errorf("%d holders left, want 0", n)
			}
			start = time.Now()
			g.pass()
			if d := time.Since(start); d > 50*time.Millisecond {
				t.Errorf("pass of the reopened gate took %v", d)
			}
		})
	}
}
