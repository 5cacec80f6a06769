package rt_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// BenchmarkKernelForHit measures a fast kernel cache hit: the lookup that
// every generated Enqueue does before setting arguments. Run it with
// -cpu 1,2: the parallel form shares one spec between goroutines.
func BenchmarkKernelForHit(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	spec := rt.NewKernelSpec(&rt.ProgramImage{ID: "bench.Touch", Source: emptySrc}, "touch")
	if _, err := ctx.KernelFor(spec, q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer() // the first KernelFor built the program
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ctx.KernelFor(spec, q); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAcquireKernel measures the hit with the kernel's lock taken and
// released, as a generated Enqueue does around setting arguments.
func BenchmarkAcquireKernel(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	spec := rt.NewKernelSpec(&rt.ProgramImage{ID: "bench.Touch", Source: emptySrc}, "touch")
	b.ReportAllocs()
	for b.Loop() {
		ck, err := ctx.AcquireKernel(spec, q)
		if err != nil {
			b.Fatal(err)
		}
		ck.Unlock()
	}
}
