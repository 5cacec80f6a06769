package rt_test

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// The cost of tracing through rt, side by side for the tracing settings:
// off (the context of the other benchmarks: one atomic load per trace
// point), the host task graph only, device times sampled one in 16, and
// device times for every command. The traced contexts write to the built-in
// Perfetto writer, whose output goes to /dev/null (the formatting is done,
// the disk is left out).

// traceSettings are the settings the benchmarks compare: a name and the
// DGEN_TRACE value ("" for off).
var traceSettings = []struct{ name, spec string }{
	{"off", ""},
	{"host", "perfetto:" + os.DevNull},
	{"device=16", "perfetto:" + os.DevNull + ",device=16"},
	{"device=all", "perfetto:" + os.DevNull + ",device=all"},
}

var (
	tracedMu       sync.Mutex
	tracedContexts = map[string]*rt.Context{}
)

// benchContextFor returns the context of the benchmarks with tracing spec
// (the default context for ""), opened once.
func benchContextFor(b *testing.B, spec string) *rt.Context {
	b.Helper()
	if spec == "" {
		return openDefault(b)
	}
	tracedMu.Lock()
	defer tracedMu.Unlock()
	if ctx := tracedContexts[spec]; ctx != nil {
		return ctx
	}
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Trace = spec
	ctx, err := rt.OpenConfig(withEnv(b, cfg))
	if err != nil {
		testenv.SkipWithoutDevice(b, err)
		b.Fatal(err)
	}
	tracedContexts[spec] = ctx
	return ctx
}

// benchLaunches enqueues 1-item launches of a kernel: cpu-ns/op is the CPU
// time of the enqueuing thread per launch (rt's work and the driver calls
// it makes, PoCL's execution of the kernel on its own threads left out),
// which the other processes of a loaded machine inflate less than ns/op.
func benchLaunches(b *testing.B, spec string, submit bool) {
	ctx := benchContextFor(b, spec)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu0 := threadCPU()
	defer func() { b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i++ {
		var err error
		if submit {
			err = raw.Submit(q, k, rt.Range1(1))
		} else {
			_, err = raw.Launch(q, k, rt.Range1(1))
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

// BenchmarkLaunchTraced measures a 1-item Launch under each tracing
// setting; "off" is BenchmarkLaunch.
func BenchmarkLaunchTraced(b *testing.B) {
	for _, ts := range traceSettings {
		b.Run(ts.name, func(b *testing.B) { benchLaunches(b, ts.spec, false) })
	}
}

// BenchmarkSubmitTraced measures a 1-item Submit under each tracing
// setting: with device times, a sampled Submit creates an event.
func BenchmarkSubmitTraced(b *testing.B) {
	for _, ts := range traceSettings {
		b.Run(ts.name, func(b *testing.B) { benchLaunches(b, ts.spec, true) })
	}
}

// BenchmarkTracedLoop runs a loop of launches of a kernel over
// DGEN_BENCH_ITEMS work items (default 1<<20), DGEN_BENCH_LOOP launches
// (default 100) then Finish per operation, under each tracing setting side
// by side: the application-level overhead of tracing, the
// stencil-independent half of the Hotspot measurement. On a GPU:
//
//	go test -run XXX -bench TracedLoop -count 5 ./rt
func BenchmarkTracedLoop(b *testing.B) {
	items, loop := envInt(b, "DGEN_BENCH_ITEMS", 1<<20), envInt(b, "DGEN_BENCH_LOOP", 100)
	for _, ts := range traceSettings {
		b.Run(ts.name, func(b *testing.B) {
			ctx := benchContextFor(b, ts.spec)
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
					if err := raw.Submit(q, k, rt.Range1(items)); err != nil {
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
// the event's cleanup and the driver's event, and the weak pointer under
// which its context keeps it live for Close (live.go), a Write its closure
// and the captured slice header.
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
		{"Submit", 0, func() { raw.Submit(q, k, rt.Range1(1)) }},
		{"Launch", 5, func() {
			// Released, as a loop would: a backend may pool what an
			// event holds (rt/cuda its CUDA events).
			if ev, err := raw.Launch(q, k, rt.Range1(1)); err == nil {
				ev.Release()
			}
		}},
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

// TestTraceHostAllocs fails if a traced Submit allocates in the steady
// state when tracing records the host task graph only, to the Perfetto
// writer (whose goroutine's allocations count too).
func TestTraceHostAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testDevice(), Trace: "perfetto:" + os.DevNull}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	buf, _ := rt.NewBuffer[int32](ctx, 1)
	k := addOne(t, ctx, buf)
	submits := func(n int) {
		for range n {
			if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
				t.Fatal(err)
			}
		}
		q.Finish()
		time.Sleep(200 * time.Millisecond) // the writer formats what is left
	}
	submits(5000) // past the writer's first batches
	const n = 4000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	submits(n)
	runtime.ReadMemStats(&after)
	// A little slack for the runtime's own allocations in the meantime.
	if got := after.Mallocs - before.Mallocs; got > n/100 {
		t.Errorf("%d traced Submits allocate %d times, want none", n, got)
	}
}
