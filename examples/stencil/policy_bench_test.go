package main

import (
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// BenchmarkPolicy runs the Hotspot time loop (512x512, one step per launch,
// 64 steps per run) with each step's output from the allocator, under each
// allocator policy side by side, in tagged mode (a //dgen:alloc site) and
// untagged mode (rt.Alloc). Beside the time per step it reports the
// context's peak device bytes owned (held + in use), peak bytes in use, and
// driver allocations per run.
//
//	go test ./examples/stencil -run '^$' -bench Policy -benchtime 20x -count 5
func BenchmarkPolicy(b *testing.B) {
	const n, steps = 512, 64
	temp, power := Inputs(n, 1)
	for _, mode := range []string{"tagged", "untagged"} {
		for _, policy := range []rt.AllocPolicy{rt.AllocFull, rt.AllocTagged, rt.AllocBestFit} {
			b.Run(mode+"/"+policy.String(), func(b *testing.B) {
				ctx, err := rt.OpenConfig(rt.Config{Device: "cpu", AllocPolicy: policy})
				if err != nil {
					testenv.SkipWithoutDevice(b, err)
					b.Fatal(err)
				}
				defer ctx.Close()
				sim, err := NewSim(ctx, power, n, n)
				if err != nil {
					b.Fatal(err)
				}
				defer sim.Close()
				var allocs uint64
				var elapsed float64
				runs := 0
				for b.Loop() {
					res, err := sim.Run(mode, temp, steps, 1)
					if err != nil {
						b.Fatal(err)
					}
					allocs += res.DriverAllocs
					elapsed += float64(res.Elapsed.Nanoseconds())
					runs++
				}
				s := ctx.Stats().Alloc.Total()
				b.ReportMetric(elapsed/float64(runs*steps), "ns/step")
				b.ReportMetric(float64(s.Peak), "peak-owned-B")
				b.ReportMetric(float64(s.PeakInUse), "peak-inuse-B")
				b.ReportMetric(float64(allocs)/float64(runs), "driver-allocs/run")
			})
		}
	}
}
