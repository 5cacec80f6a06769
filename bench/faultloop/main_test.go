package main

import (
	"bytes"
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

// TestFaultLoop runs the faulting service loop on a GPU (skipped where
// there is none: on a CPU the faulting kernel ends the process): 16
// goroutines, a fault every 200 requests, until Open fails. Every
// goroutine gets the fault within a second, none hangs, Close returns the
// fault, every request between faults is verified, and the loop ends with
// the restart message once every backend lost the device.
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
