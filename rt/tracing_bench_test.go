package rt_test

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// The cost of tracing through rt. The Off benchmarks run on the context of
// the other benchmarks (tracing off: one atomic load per trace point); the
// On benchmarks on a second context that traces to the built-in Perfetto
// writer, whose output goes to /dev/null (the formatting is done, the
// disk is left out).

// tracedContext is the traced context of the benchmarks.
var tracedContext = sync.OnceValues(func() (*rt.Context, error) {
	cfg, err := rt.ConfigFromEnv(nil)
	if err != nil {
		return nil, err
	}
	cfg.Trace = "perfetto:" + os.DevNull
	return rt.OpenConfig(cfg)
})

func benchContextFor(b *testing.B, traced bool) *rt.Context {
	b.Helper()
	if !traced {
		return openDefault(b)
	}
	ctx, err := tracedContext()
	if err != nil {
		b.Fatal(err)
	}
	return ctx
}

func benchLaunches(b *testing.B, traced, submit bool) {
	ctx := benchContextFor(b, traced)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if submit {
			err = q.Submit(k, rt.Range1(1))
		} else {
			_, err = q.Launch(k, rt.Range1(1))
		}
		if err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			q.Finish()
		}
	}
	q.Finish()
}

// BenchmarkLaunchTraceOff is BenchmarkLaunch: it is the figure to compare
// with BenchmarkLaunch before tracing was wired in (same allocations).
func BenchmarkLaunchTraceOff(b *testing.B) { benchLaunches(b, false, false) }

// BenchmarkLaunchTraceOn measures a launch traced to the Perfetto writer,
// with its device times read from the pending list.
func BenchmarkLaunchTraceOn(b *testing.B) { benchLaunches(b, true, false) }

// BenchmarkSubmitTraceOff is BenchmarkSubmit with tracing off.
func BenchmarkSubmitTraceOff(b *testing.B) { benchLaunches(b, false, true) }

// BenchmarkSubmitTraceOn measures a traced Submit, which creates an event
// to read its device times.
func BenchmarkSubmitTraceOn(b *testing.B) { benchLaunches(b, true, true) }

// BenchmarkTracedLoop runs a loop of launches of a kernel over
// DGEN_BENCH_ITEMS work items (default 1<<20), DGEN_BENCH_LOOP launches
// (default 100) then Finish per operation, with tracing off and on side by
// side: the application-level overhead of tracing, the stencil-independent
// half of the Hotspot measurement. On a GPU:
//
//	go test -run XXX -bench TracedLoop -count 5 ./rt
func BenchmarkTracedLoop(b *testing.B) {
	items, loop := envInt(b, "DGEN_BENCH_ITEMS", 1<<20), envInt(b, "DGEN_BENCH_LOOP", 100)
	for _, traced := range []bool{false, true} {
		name := "off"
		if traced {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			ctx := benchContextFor(b, traced)
			q := ctx.Queue()
			buf, err := rt.NewBuffer[int32](ctx, items)
			if err != nil {
				b.Fatal(err)
			}
			defer buf.Free()
			k := addOne(b, ctx, buf)
			defer k.Release()
			b.ReportMetric(float64(loop), "launches/op")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for range loop {
					if err := q.Submit(k, rt.Range1(items)); err != nil {
						b.Fatal(err)
					}
				}
				if err := q.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestTraceOffAllocs fails if a trace point allocates when tracing is off:
// each command must allocate exactly what it did before tracing was wired
// in (measured at commit 6de5f79): a Submit nothing, a Launch its Event,
// the event's cleanup and the driver's event, a Write its closure and the
// captured slice header.
func TestTraceOffAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	ctx := openCPU(t)
	q := ctx.Queue()
	buf, _ := rt.NewBuffer[int32](ctx, 1)
	k := addOne(t, ctx, buf)
	src := []int32{1}
	tests := []struct {
		name string
		max  float64
		do   func()
	}{
		{"Submit", 0, func() { q.Submit(k, rt.Range1(1)) }},
		{"Launch", 4, func() { q.Launch(k, rt.Range1(1)) }},
		{"Write", 2, func() { buf.Write(q, src) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(200, tt.do); n > tt.max {
				t.Errorf("%s allocates %v times with tracing off, want at most %v", tt.name, n, tt.max)
			}
		})
	}
	q.Finish()
}
