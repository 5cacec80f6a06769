package rt_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/raw"
)

// The backend "null" is the fake backend with the one-call launch of a
// real one (its queues are driver.ArgLauncher) and launches that cost nothing, so that a
// benchmark on it measures rt's own host path: everything a launch costs
// above the device API. On the GPU the same path adds this much to the
// driver's own per-launch cost.
func init() { driver.Register("null", nullBackend{}) }

type nullBackend struct{ fakeBackend }

func (nullBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	return &nullContext{fakeContext{ndev: len(devs)}}, nil
}

type nullContext struct{ fakeContext }

func (c *nullContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return nullQueue{}, nil
}

// Handle makes fake buffers driver.NativeBuffers, as a real backend's are.
func (b *fakeBuffer) Handle() uint64 { return uint64(uintptr(unsafe.Pointer(b))) }

type nullQueue struct{ fakeQueue }

// LaunchArgs takes the changed arguments as set and launches nothing.
func (nullQueue) LaunchArgs(k driver.Kernel, a *driver.Args, r *driver.NDRange, wait []driver.Event, event bool) (driver.Event, error) {
	for i := range a.Slots {
		a.Slots[i].Changed = false
	}
	a.Changed = 0
	if event {
		return fakeEvent{}, nil
	}
	return nil, nil
}

// benchStep is a kernel spec shaped like examples/stencil's Hotspot step:
// 13 arguments, three of them buffers.
var (
	benchStepProg = codegen.Register(&codegen.Program{
		ID:    pkg + "benchStepProg",
		Image: "__kernel void hotspot_step(int it, __global const float* power, __global const float* src, __global float* dst, int cols, int rows, int bc, int br, float cap, float rx, float ry, float rz, float dt) {}",
		Name:  "bench_step.cl",
		Var:   codegen.ProgramVar(&benchStepProgHandle),
	})
	benchStepProgHandle rt.Program
	benchStepKern       = codegen.Register(&codegen.Kernel{
		ID: pkg + "benchStep", Name: "hotspot_step", Program: benchStepProg, Params: 13,
	})
)

// enqueueBenchStep is what a generated Enqueue of benchStep does.
func enqueueBenchStep(q *rt.Queue, r rt.Range, it int32, power, src, dst rt.Buffer[float32]) error {
	k, err := codegen.Acquire(q, benchStepKern)
	if err != nil {
		return err
	}
	setBenchStep(k, it, power, src, dst)
	return codegen.Submit(q, k, r, nil)
}

// setBenchStep sets the arguments of a benchStep launch.
func setBenchStep(k *codegen.Instance, it int32, power, src, dst rt.Buffer[float32]) {
	codegen.SetScalar(k, 0, it)
	codegen.SetBuffer(k, 1, power)
	codegen.SetBuffer(k, 2, src)
	codegen.SetBuffer(k, 3, dst)
	codegen.SetScalar(k, 4, int32(512))
	codegen.SetScalar(k, 5, int32(512))
	codegen.SetScalar(k, 6, int32(1))
	codegen.SetScalar(k, 7, int32(1))
	codegen.SetScalar(k, 8, float32(0.5))
	codegen.SetScalar(k, 9, float32(0.25))
	codegen.SetScalar(k, 10, float32(0.25))
	codegen.SetScalar(k, 11, float32(0.125))
	codegen.SetScalar(k, 12, float32(0.001))
}

var (
	benchGlobal   rt.DeviceGlobal[uint32]
	_             = codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&benchGlobal), ID: pkg + "benchGlobal"})
	benchStepSite rt.AllocSite[float32]
	_             = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&benchStepSite), ID: pkg + "benchStepSite", Name: "benchStepSite"})
)

// BenchmarkHostPath measures rt's host path on the null backend, per
// launch: "enqueue" is a generated Enqueue of a 13-argument kernel over
// two fixed buffers; "touch" the generated Enqueue of a kernel of one
// buffer argument and "raw" rt/raw's Submit of it (bench/scaling's launch
// loop); "tagged" is the Hotspot time step as examples/stencil's tagged
// mode runs it: the output from an allocation site, the generated Enqueue,
// the input freed; "read4" and "write4" are blocking 4-byte transfers.
//
//	go test ./rt -run '^$' -bench HostPath -benchmem -count 10
func BenchmarkHostPath(b *testing.B) {
	q, r, power, in := openHostPath(b)
	b.Run("enqueue", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := enqueueBenchStep(q, r, int32(i&1), power, in, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	touch, rk, r64 := hostPathTouch(b, q)
	b.Run("touch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := enqueueTouch64(q, r64, touch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := raw.Submit(q, rk, r64); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tagged", func(b *testing.B) { in = benchTaggedSteps(b, q, r, power, in) })
	v := []float32{1}
	b.Run("read4", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := power.ReadAt(q, 0, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write4", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := power.WriteAt(q, 0, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("global-read4", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := benchGlobal.Read(q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("global-write4", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := benchGlobal.Write(q, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := in.Free(); err != nil {
		b.Fatal(err)
	}
	power.Free()
}

// enqueueTouch64 is the generated Enqueue of touchSpec over r.
func enqueueTouch64(q *rt.Queue, r rt.Range, out rt.Buffer[int32]) error {
	k, err := codegen.Acquire(q, touchSpec)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, out)
	return codegen.Submit(q, k, r, nil)
}

// hostPathTouch returns a buffer of 64 ints for touchSpec's launches on q,
// a raw kernel of touchSpec's program with its argument set to it, and
// bench/scaling's range of 64 items.
func hostPathTouch(b *testing.B, q *rt.Queue) (rt.Buffer[int32], *raw.Kernel, rt.Range) {
	ctx := q.Context()
	buf, err := rt.NewBuffer[int32](ctx, 64)
	if err != nil {
		b.Fatal(err)
	}
	prog, err := raw.Build(ctx, "touch", _touchProg.Image, "")
	if err != nil {
		b.Fatal(err)
	}
	k, err := prog.Kernel("touch1")
	if err == nil {
		err = raw.SetBuffer(k, 0, buf)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		k.Release()
		prog.Release()
		buf.Free()
	})
	return buf, k, rt.Range1(64)
}

// openHostPath opens a context on the null backend for hostPathOn.
func openHostPath(b *testing.B) (*rt.Queue, rt.Range, rt.Buffer[float32], rt.Buffer[float32]) {
	return hostPathOn(b, openFakeBackend(b, "null", nil))
}

// hostPathOn returns ctx's queue, the launch range of a 512x512 Hotspot
// step, the power map and a first temperature buffer from benchStepSite.
func hostPathOn(b *testing.B, ctx *rt.Context) (*rt.Queue, rt.Range, rt.Buffer[float32], rt.Buffer[float32]) {
	q := ctx.Queue()
	power, err := rt.NewBuffer[float32](ctx, 512*512)
	if err != nil {
		b.Fatal(err)
	}
	in, err := benchStepSite.Alloc(q, 512*512)
	if err != nil {
		b.Fatal(err)
	}
	return q, rt.Range2(576, 576).WithLocal(16, 16), power, in
}

// benchTaggedSteps runs the Hotspot tagged step of BenchmarkHostPath b.N
// times from in, and returns the last output. Beside the wall time it
// reports the CPU time of the stepping thread (cpu-ns/op), which other
// processes on a shared machine disturb less.
func benchTaggedSteps(b *testing.B, q *rt.Queue, r rt.Range, power, in rt.Buffer[float32]) rt.Buffer[float32] {
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	defer func() { b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		in = taggedStep(b, q, r, power, in)
	}
	return in
}

// taggedStep is one Hotspot tagged step from in: its output allocated from
// benchStepSite, the generated Enqueue, in freed.
func taggedStep(b *testing.B, q *rt.Queue, r rt.Range, power, in rt.Buffer[float32]) rt.Buffer[float32] {
	out, err := benchStepSite.Alloc(q, 512*512)
	if err != nil {
		b.Fatal(err)
	}
	if err := enqueueBenchStep(q, r, 1, power, in, out); err != nil {
		b.Fatal(err)
	}
	if err := in.Free(); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkHostPathTraced is BenchmarkHostPath's tagged step with the
// host task graph traced to a Perfetto file ("host"), and with device
// times asked of every command ("device"; the null backend reports none,
// so this is the host side of it): what tracing adds to rt's own path.
//
//	go test ./rt -run '^$' -bench 'HostPath(Traced)?$/tagged|HostPathTraced' -count 10
func BenchmarkHostPathTraced(b *testing.B) {
	for _, tt := range []struct{ name, opts string }{{"host", ""}, {"device", ",device=all"}} {
		b.Run(tt.name, func(b *testing.B) {
			cc := defaultCacheConfig()
			cc.Disk.Persistent = false
			ctx, err := rt.OpenConfig(withEnv(b, rt.Config{Backend: "null", Device: "cpu", Cache: &cc, Trace: "perfetto:" + filepath.Join(b.TempDir(), "t.json") + tt.opts}))
			if err != nil {
				b.Fatal(err)
			}
			defer ctx.Close()
			q, r, power, in := hostPathOn(b, ctx)
			in = benchTaggedSteps(b, q, r, power, in)
			b.StopTimer() // Close converts the trace
			in.Free()
			power.Free()
		})
	}
}

// TestGlobalsAlternate: host copies of two device globals in turn, on two
// queues, each find their own storage (a queue keeps the storage it found
// last, keyed by the global).
func TestGlobalsAlternate(t *testing.T) {
	ctx := openFake(t, nil)
	q2, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []*rt.Queue{ctx.Queue(), q2, ctx.Queue()} {
		a, b := [3]uint32{uint32(i), 1, 1}, [3]uint32{uint32(i), 2, 2}
		if err := errors.Join(slowGlobal.Write(q, a), quickGlobal.Write(q, b)); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			ga, err := slowGlobal.Read(q)
			if err != nil {
				t.Fatal(err)
			}
			gb, err := quickGlobal.Read(q)
			if err != nil {
				t.Fatal(err)
			}
			if ga != a || gb != b {
				t.Fatalf("queue %d: read %v and %v, wrote %v and %v", i, ga, gb, a, b)
			}
		}
	}
}

// pollution is BenchmarkHostPathCold's memory walk: 256 KiB, eight times
// a 32 KiB L1 data cache.
var (
	pollution []uint64
	pollSink  uint64
)

// pollute walks pollution a cache line at a time, evicting L1 as the
// driver's own work between two launches does on the GPU host.
//
//go:noinline
func pollute() {
	if pollution == nil {
		pollution = make([]uint64, 256<<10/8)
	}
	var s uint64
	for i := 0; i < len(pollution); i += 8 {
		s += pollution[i]
		pollution[i] = s
	}
	pollSink += s
}

// BenchmarkHostPathCold is BenchmarkHostPath's launches with L1 evicted
// before each, and "swap", the Hotspot step from one of two buffers into
// the other, swapped at every step as bench/inproc's swap way does (so
// that two arguments change at every launch, where "enqueue" passes the
// same ones): between two launches on a GPU, the driver's work
// evicts rt's data, and a launch costs about what it misses in cache. Its
// times are the walk's; what it is for is the count of cache lines a
// launch touches, which scripts/cold-lines.sh reads with callgrind's cache
// simulation (deterministic, where this machine's timings are not).
func BenchmarkHostPathCold(b *testing.B) {
	q, r, power, in := openHostPath(b)
	b.Run("enqueue", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			pollute()
			if err := enqueueBenchStep(q, r, int32(i&1), power, in, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	touch, rk, r64 := hostPathTouch(b, q)
	b.Run("touch", func(b *testing.B) {
		for b.Loop() {
			pollute()
			if err := enqueueTouch64(q, r64, touch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			pollute()
			if err := raw.Submit(q, rk, r64); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("swap", func(b *testing.B) {
		spare, err := benchStepSite.Alloc(q, 512*512)
		if err != nil {
			b.Fatal(err)
		}
		defer spare.Free()
		src, dst := in, spare
		for b.Loop() {
			pollute()
			if err := enqueueBenchStep(q, r, 1, power, src, dst); err != nil {
				b.Fatal(err)
			}
			src, dst = dst, src
		}
	})
	b.Run("tagged", func(b *testing.B) {
		for b.Loop() {
			pollute()
			in = taggedStep(b, q, r, power, in)
		}
	})
}

// The Hotspot step's kernel in a program that uses a specialization
// constant, BSTEP: benchPlainKern launches it with the context's value,
// benchSpecKern with a value of its own (a field tagged dgen:"spec").
var (
	benchSpecConst  rt.SpecConst[int32]
	benchSpecHandle rt.Program
	_benchSpecConst = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&benchSpecConst, 1), ID: pkg + "benchSpecConst",
		Name: "BSTEP", Default: "1", Min: "1", Max: "64"})
	benchSpecProg = codegen.Register(&codegen.Program{
		ID:    pkg + "benchSpecProg",
		Image: "__kernel void hotspot_step(int it, __global const float* power, __global const float* src, __global float* dst, int cols, int rows, int bc, int br, float cap, float rx, float ry, float rz, float dt) { (void)BSTEP; }",
		Name:  "bench_spec.cl", Var: codegen.ProgramVar(&benchSpecHandle), SpecConsts: []*codegen.SpecConst{_benchSpecConst},
	})
	benchPlainKern = codegen.Register(&codegen.Kernel{ID: pkg + "benchPlain", Name: "hotspot_step", Program: benchSpecProg, Params: 13})
	benchSpecKern  = codegen.Register(&codegen.Kernel{ID: pkg + "benchSpec", Name: "hotspot_step", Program: benchSpecProg, Params: 13,
		Specs: []*codegen.SpecConst{_benchSpecConst}})
)

// enqueueBenchSpec is what a generated Enqueue of the step does: with
// own, a spec whose field gives BSTEP (AcquireSpec), else a plain one.
func enqueueBenchSpec(q *rt.Queue, r rt.Range, power, src, dst rt.Buffer[float32], own bool, v rt.Spec[int32]) error {
	var k *codegen.Instance
	var err error
	if own {
		var a codegen.SpecArgs
		codegen.SetSpec[int32](&a, 0, &benchSpecConst, v)
		k, err = codegen.AcquireSpec(q, benchSpecKern, &a)
	} else {
		k, err = codegen.Acquire(q, benchPlainKern)
	}
	if err != nil {
		return err
	}
	setBenchStep(k, 1, power, src, dst)
	return codegen.Submit(q, k, r, nil)
}

// BenchmarkHostPathSpec is BenchmarkHostPath's enqueue of a kernel whose
// program uses a specialization constant, on the null backend: "plain"
// with the context's value, "own" with a value of its own whose instance
// is parked, "own-alt" alternating two values of its own. The host path's
// share of issue 44's bound (own within 1.05× plain), apart from the
// driver.
//
//	go test ./rt -run '^$' -bench HostPathSpec -count 10
func BenchmarkHostPathSpec(b *testing.B) {
	q, r, power, in := openHostPath(b)
	vals := []rt.Spec[int32]{benchSpecConst.Of(2), benchSpecConst.Of(3)}
	for _, bb := range []struct {
		name string
		own  bool
		n    int // values to alternate
	}{{"plain", false, 1}, {"own", true, 1}, {"own-alt", true, 2}} {
		b.Run(bb.name, func(b *testing.B) {
			for i := range 2 {
				if err := enqueueBenchSpec(q, r, power, in, in, bb.own, vals[i%bb.n]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			defer func() { b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for i := 0; b.Loop(); i++ {
				if err := enqueueBenchSpec(q, r, power, in, in, bb.own, vals[i%bb.n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	in.Free()
	power.Free()
}

// TestFreeBetweenSetAndSubmit frees a spec's buffer argument after it was
// set and before the launch, as a Free racing a launch from another
// goroutine may: the launch fails with an error wrapping ErrFreed that
// names the argument, launches nothing, and leaves the instance and the
// other arguments' uses as they were, so that the next launch runs.
func TestFreeBetweenSetAndSubmit(t *testing.T) {
	ctx := openFakeBackend(t, "null", nil)
	q, r := ctx.Queue(), rt.Range1(64)
	buf, err := rt.NewBuffer[int32](ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := enqueueTouch64(q, r, buf); err != nil {
		t.Fatalf("first launch: %v", err)
	}
	k, err := codegen.Acquire(q, touchSpec)
	if err != nil {
		t.Fatal(err)
	}
	codegen.SetBuffer(k, 0, buf)
	if err := buf.Free(); err != nil {
		t.Fatal(err)
	}
	if err := codegen.Submit(q, k, r, nil); !errors.Is(err, rt.ErrFreed) || !strings.Contains(err.Error(), "argument 0") {
		t.Fatalf("launch of a buffer freed after it was set: %v, want an error wrapping ErrFreed naming argument 0", err)
	}
	next, err := rt.NewBuffer[int32](ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Free()
	if err := enqueueTouch64(q, r, next); err != nil {
		t.Fatalf("launch after the failed one: %v", err)
	}
}
