package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// TestRequests serves requests without a fault on the device that
// DGEN_DEVICE selects (PoCL here): every element verified.
func TestRequests(t *testing.T) {
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	s := &state{o: options{n: 1000}}
	buf, err := rt.NewBuffer[int32](ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	host := make([]int32, 1000)
	for r := range int64(20) {
		if err := s.request(ctx.Queue(), buf, host, r); err != nil {
			t.Fatal(err)
		}
	}
	if s.served.Load() != 20 || s.failed.Load() != 0 {
		t.Errorf("%d served, %d failed; want 20 and 0", s.served.Load(), s.failed.Load())
	}
}

// TestHealthWatch: the health check polls a context that serves without
// an error until stopped, and reports a closed context at once.
func TestHealthWatch(t *testing.T) {
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	stop := make(chan struct{})
	w := watchHealth(ctx, stop)
	time.Sleep(20 * time.Millisecond)
	close(stop)
	<-w.done
	if w.err != nil || w.polls < 2 {
		t.Errorf("health check of a serving context: %d polls, error %v; want several and none", w.polls, w.err)
	}

	w = watchHealth(ctx, make(chan struct{}))
	closed := time.Now()
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the health check does not report a closed context")
	}
	if !errors.Is(w.err, rt.ErrClosed) || w.at.Sub(closed) > 100*time.Millisecond {
		t.Errorf("health check of a closed context: %v, %v after Close; want ErrClosed at once", w.err, w.at.Sub(closed))
	}
}

// TestFaultLoop runs the faulting service loop on a GPU (skipped where
// there is none: on a CPU the faulting kernel ends the process): 16
// goroutines, a fault every 200 requests, until Open fails. Every
// goroutine gets the fault within a second, none hangs, Close returns the
// fault, every request between faults is verified, and the loop ends with
// the restart message once every backend lost the device. It comes after
// every other test that opens a device: after it none opens in this
// process.
func TestFaultLoop(t *testing.T) {
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	gpu := ctx.Devices()[0].Type == rt.DeviceGPU
	ctx.Close()
	if !gpu {
		t.Skip("no GPU: on a CPU (PoCL) the faulting kernel ends the process")
	}
	var out bytes.Buffer
	sum, err := run(options{goroutines: 16, every: 200, n: 4096, backend: "auto", prewarm: true, hang: 10 * time.Second}, &out)
	t.Logf("faultloop:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !sum.OK() {
		t.Errorf("summary %+v: want every goroutine's fault within 1 s, no hang, every request verified, Close returning the fault", sum)
	}
	if sum.FaultsSurvived < 1 || !strings.Contains(sum.Stopped, "restart the process") {
		t.Errorf("survived %d faults, stopped by %q; want at least one (both NVIDIA backends) and the restart message", sum.FaultsSurvived, sum.Stopped)
	}
}

// TestHealthFigures: an epoch's health figures, from the faulting launch
// and from the first goroutine's error to the first Health that reported
// the fault, and the summary's verdict on them.
func TestHealthFigures(t *testing.T) {
	fault := &rt.DeviceFault{Backend: "cuda", Device: "GPU", Err: errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")}
	bad := time.Now()
	ms := func(n float64) time.Time { return bad.Add(time.Duration(n * float64(time.Millisecond))) }
	tests := []struct {
		name                 string
		health               error
		at                   time.Time
		outs                 []outcome
		unhealthy, fromError float64 // -1: omitted
		within               bool
	}{
		{"after the first error", fault, ms(5), []outcome{{fault, ms(3)}, {fault, ms(2)}}, 5, 3, true},
		{"before any error", fault, ms(2), []outcome{{fault, ms(7)}}, 2, -5, true},
		{"late", fault, ms(1500), []outcome{{fault, ms(3)}}, 1500, 1497, false},
		{"no goroutine got the fault", fault, ms(4), []outcome{{errors.New("other"), ms(3)}}, 4, -1, true},
		{"not reported", nil, time.Time{}, []outcome{{fault, ms(3)}}, -1, -1, false},
		{"another error", rt.ErrClosed, ms(4), []outcome{{fault, ms(3)}}, -1, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := epoch{CloseOK: true}
			ep.health(&healthWatch{at: tt.at, err: tt.health}, bad, tt.outs)
			got := func(p *float64) float64 {
				if p == nil {
					return -1
				}
				return *p
			}
			if got(ep.UnhealthyMS) != tt.unhealthy || got(ep.ErrorToUnhealthyMS) != tt.fromError {
				t.Errorf("launch to unhealthy %v ms, first error to unhealthy %v ms; want %v and %v (-1: omitted)",
					got(ep.UnhealthyMS), got(ep.ErrorToUnhealthyMS), tt.unhealthy, tt.fromError)
			}
			sum := summary{AllWithin1s: true, UnhealthyWithin1s: true, CloseOK: true}
			sum.add(epoch{CloseOK: true, UnhealthyMS: msSince(bad, ms(10))})
			sum.add(ep)
			if sum.UnhealthyWithin1s != tt.within || sum.OK() != tt.within {
				t.Errorf("summary %+v: unhealthy within 1 s %v, OK %v; want %v", sum, sum.UnhealthyWithin1s, sum.OK(), tt.within)
			}
			if want := max(10, tt.unhealthy); sum.UnhealthyMSMax != want {
				t.Errorf("summary's longest launch to unhealthy %v ms, want %v", sum.UnhealthyMSMax, want)
			}
		})
	}
}
