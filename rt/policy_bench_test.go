package rt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// mixedStep is one step of a program with allocations of mixed sizes: six
// temporaries under four sites and the untagged pool, sizes log-uniform
// from 64 to 256Ki float32 (256 B to 1 MiB), each filled on the device and
// freed in the step, and a state buffer carried to the next step. Step i
// draws the same sizes under every policy.
func mixedStep(q *rt.Queue, i int, state rt.Buffer[float32]) (rt.Buffer[float32], error) {
	rng := rand.New(rand.NewPCG(uint64(i), 12))
	sites := []func(*rt.Queue, int) (rt.Buffer[float32], error){siteA.Alloc, siteB.Alloc, outSite.Alloc, rt.Alloc[float32]}
	size := func() int { return 64 << rng.IntN(13) * (4 + rng.IntN(4)) / 4 }
	var tmps []rt.Buffer[float32]
	defer func() {
		for _, t := range tmps {
			t.Free()
		}
	}()
	for range 6 {
		b, err := sites[rng.IntN(len(sites))](q, size())
		if err != nil {
			return state, err
		}
		tmps = append(tmps, b)
		if err := released(b.Fill(q, 1)); err != nil {
			return state, err
		}
	}
	next, err := siteB.Alloc(q, size()) // the state shares a site with temporaries, as a kernel's do
	if err != nil {
		return state, err
	}
	if err := released(next.Fill(q, 2)); err != nil {
		return state, err
	}
	if memOf(state) != nil {
		state.Free()
	}
	return next, nil
}

// BenchmarkPolicyMixed runs mixedStep under each allocator policy side by
// side on one queue. Beside the time per step it reports the peak device
// bytes owned (held + in use) and in use, and the driver allocations per
// step.
//
//	go test ./rt -run '^$' -bench PolicyMixed -benchtime 400x -count 5
func BenchmarkPolicyMixed(b *testing.B) {
	for _, policy := range []rt.AllocPolicy{rt.AllocFull, rt.AllocTagged, rt.AllocBestFit} {
		b.Run(policy.String(), func(b *testing.B) {
			ctx := openCPUConfig(b, rt.Config{AllocPolicy: policy})
			q := ctx.Queue()
			var state rt.Buffer[float32]
			var err error
			i := 0
			for b.Loop() {
				if state, err = mixedStep(q, i, state); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if err := q.Finish(); err != nil {
				b.Fatal(err)
			}
			state.Free()
			s := ctx.Stats().Alloc
			t := s.Total()
			b.ReportMetric(float64(t.Peak), "peak-owned-B")
			b.ReportMetric(float64(t.PeakInUse), "peak-inuse-B")
			b.ReportMetric(float64(s.DriverAllocs)/float64(i), "driver-allocs/step")
		})
	}
}

// BenchmarkReuseOrder measures a reuse that needs ordering against one that
// does not: each op fills a 1 KiB buffer from a tagged site on one queue,
// frees it, and allocates it again, on the same queue ("same") or on the
// other of two queues ("cross", where the fill is not known complete, so
// the reuse enqueues a marker on each queue). The fill is in both; the
// difference is the cost of ordering.
//
//	go test ./rt -run '^$' -bench ReuseOrder -benchmem -count 5
func BenchmarkReuseOrder(b *testing.B) {
	for _, cross := range []bool{false, true} {
		name := "same"
		if cross {
			name = "cross"
		}
		b.Run(name, func(b *testing.B) {
			ctx := openCPUConfig(b, rt.Config{})
			qs := []*rt.Queue{ctx.Queue(), ctx.Queue()}
			if cross {
				q, err := ctx.NewQueue(ctx.Devices()[0])
				if err != nil {
					b.Fatal(err)
				}
				qs[1] = q
			}
			buf, err := siteBytes.Alloc(qs[0], 1024)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				q := qs[i&1]
				if err := released(buf.Fill(q, 1)); err != nil {
					b.Fatal(err)
				}
				if err := buf.Free(); err != nil {
					b.Fatal(err)
				}
				if buf, err = siteBytes.Alloc(qs[(i+1)&1], 1024); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			for _, q := range qs {
				q.Finish()
			}
			buf.Free()
			if s := ctx.Stats().Alloc.Total(); cross && s.Ordered == 0 || !cross && s.Ordered != 0 {
				b.Fatalf("%d ordered reuses", s.Ordered)
			}
		})
	}
}
