package rt_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// BenchmarkSubmitAllocArgs measures the host cost of an event-less launch
// as a time loop makes it: two buffer arguments from an allocation site and
// an explicit work-group size, so that a launch records the use of both
// buffers (stream-ordered reuse) and checks the work-group size. The queue
// is drained every 1024 launches.
//
//	go test ./rt -run '^$' -bench SubmitAllocArgs -benchmem -count 5
func BenchmarkSubmitAllocArgs(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k := kernelOf(b, ctx, `__kernel void copy1(__global const int* a, __global int* b) { b[get_global_id(0)] = a[get_global_id(0)]; }`, "copy1")
	in, err := siteBytes.Alloc(q, 256)
	if err != nil {
		b.Fatal(err)
	}
	out, err := siteBytes.Alloc(q, 256)
	if err != nil {
		b.Fatal(err)
	}
	if err := raw.SetBuffer(k, 0, in); err != nil {
		b.Fatal(err)
	}
	if err := raw.SetBuffer(k, 1, out); err != nil {
		b.Fatal(err)
	}
	r := rt.Range1(64).WithLocal(64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := raw.Submit(q, k, r); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			q.Finish()
		}
	}
	q.Finish()
	b.StopTimer()
	in.Free()
	out.Free()
}
