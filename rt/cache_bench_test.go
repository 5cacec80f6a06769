package rt_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// BenchmarkKernelForHit measures a fast kernel cache hit: the lookup that
// every generated Enqueue does before setting arguments. Run it with
// -cpu 1,2: the parallel form shares one spec between goroutines.
func BenchmarkKernelForHit(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	spec := core.NewKernelSpec(&core.ProgramImage{ID: "bench.Touch", Source: emptySrc}, "touch")
	if _, err := cx(ctx).KernelFor(spec, cq(q)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer() // the first KernelFor built the program
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cx(ctx).KernelFor(spec, cq(q)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A kernel registered as generated code registers one, for
// BenchmarkGeneratedAcquire.
var (
	benchTouchProg  rt.Program
	_benchTouchProg = &codegen.Program{Var: codegen.ProgramVar(&benchTouchProg), ID: pkg + "benchTouchProg", Name: "benchTouchProg", Image: emptySrc}
	benchTouchKern  = &codegen.Kernel{ID: pkg + "BenchTouch", Name: "touch", Program: _benchTouchProg, Params: 1}
	_               = codegen.Register(_benchTouchProg)
	_               = codegen.Register(benchTouchKern)
)

// BenchmarkGeneratedAcquire measures what a generated Enqueue does around
// setting arguments, through rt/codegen: Acquire (the instance parked in
// the queue's slot) and the park that its Submit does last.
func BenchmarkGeneratedAcquire(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k, err := codegen.Acquire(q, benchTouchKern) // builds the program
	if err != nil {
		b.Fatal(err)
	}
	core.ParkAcquired((*core.Kernel)(k))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		k, err := codegen.Acquire(q, benchTouchKern)
		if err != nil {
			b.Fatal(err)
		}
		core.ParkAcquired((*core.Kernel)(k))
	}
}
