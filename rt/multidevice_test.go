package rt_test

// The multi-device tests of issue 27: what a context over several devices
// promises, through the declarations that generated code registers.
//
// TestMultiDevice runs them on PoCL's two devices by default: PoCL reads
// POCL_DEVICES when it loads, so the test runs itself again in a child
// process with POCL_DEVICES="pthread pthread", and skips where PoCL is
// absent. With DGEN_TEST_DEVICES set to a selector, it runs them in this
// process on the devices that the selector picks (at least two) on the
// backend that DGEN_BACKEND names: on every NVIDIA GPU,
//
//	DGEN_BACKEND=cuda   DGEN_TEST_DEVICES='gpu:*' rt.test -test.run '^TestMultiDevice$' -test.v
//	DGEN_BACKEND=opencl DGEN_TEST_DEVICES='gpu:*' rt.test -test.run '^TestMultiDevice$' -test.v
//
// as scripts/gpu-multi.sh does ("gpu:*" is every GPU of the first platform
// that has one: NVIDIA's OpenCL platform wherever PoCL is listed).

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
)

// testDevicesVar names the variable whose selector the multi-device tests
// open instead of PoCL's two devices.
const testDevicesVar = "DGEN_TEST_DEVICES"

// mdImage is the device image of mdProg as dgen writes it: mdShared and
// mdSteps, referred to by md_bump, are hidden arguments after the kernel's
// own.
const mdImage = `
__kernel void md_axpy(__global const float* x, __global float* y, float a, int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void md_slow_sum(__global volatile const float* in, __global float* out, int iters) {
	size_t i = get_global_id(0);
	float s = 0.0f;
	for (int j = 0; j < iters; j++) s += in[i];
	out[i] = s;
}
__kernel void md_set(__global float* b, float v) { b[get_global_id(0)] = v; }
__kernel void md_bump(__global uint* out, uint add, __global uint* __dgen_g_mdShared, __global uint* __dgen_g_mdSteps) {
	out[0] = (*__dgen_g_mdShared);
	out[1] = (*__dgen_g_mdSteps);
	(*__dgen_g_mdShared) += add;
	(*__dgen_g_mdSteps) += 1;
}
`

// mdPeekImage is a second device image: it reads the shared mdShared and
// counts its own launches in mdSeen, which is its alone.
const mdPeekImage = `
__kernel void md_peek(__global uint* out, __global uint* __dgen_g_mdShared, __global uint* __dgen_g_mdSeen) {
	out[0] = (*__dgen_g_mdShared);
	(*__dgen_g_mdSeen) += 1;
	out[1] = (*__dgen_g_mdSeen);
}
`

// The declarations, registered by hand as a generated file registers them:
// a global shared by both programs (one instance per device), an
// image-scope global of each program (one instance per program and
// device), two programs, their kernel specs and an allocation site.
var (
	mdShared, mdSteps, mdSeen rt.DeviceGlobal[uint32]
	mdProg, mdPeekProg        rt.Program
	mdSite                    rt.AllocSite[float32]

	mdSharedDesc = codegen.Register(&codegen.Global{ID: pkg + "mdShared", Var: codegen.GlobalVar(&mdShared)})
	mdStepsDesc  = codegen.Register(&codegen.Global{ID: pkg + "mdSteps", Var: codegen.GlobalVar(&mdSteps), ImageScope: true, HostAccess: codegen.HostRead})
	mdSeenDesc   = codegen.Register(&codegen.Global{ID: pkg + "mdSeen", Var: codegen.GlobalVar(&mdSeen), ImageScope: true})
	mdProgDesc   = codegen.Register(&codegen.Program{ID: pkg + "mdProg", Name: "multidevice.cl", Image: mdImage,
		Owns: []*codegen.Global{mdStepsDesc}, Var: codegen.ProgramVar(&mdProg)})
	mdPeekProgDesc = codegen.Register(&codegen.Program{ID: pkg + "mdPeekProg", Name: "peek.cl", Image: mdPeekImage,
		Owns: []*codegen.Global{mdSeenDesc}, Var: codegen.ProgramVar(&mdPeekProg)})
	mdAxpyKern    = codegen.Register(&codegen.Kernel{ID: pkg + "mdAxpy", Name: "md_axpy", Program: mdProgDesc, Params: 4})
	mdSlowSumKern = codegen.Register(&codegen.Kernel{ID: pkg + "mdSlowSum", Name: "md_slow_sum", Program: mdProgDesc, Params: 3})
	mdSetKern     = codegen.Register(&codegen.Kernel{ID: pkg + "mdSet", Name: "md_set", Program: mdProgDesc, Params: 2})
	mdBumpKern    = codegen.Register(&codegen.Kernel{ID: pkg + "mdBump", Name: "md_bump", Program: mdProgDesc, Params: 2,
		Globals: []*codegen.Global{mdSharedDesc, mdStepsDesc}})
	mdPeekKern = codegen.Register(&codegen.Kernel{ID: pkg + "mdPeek", Name: "md_peek", Program: mdPeekProgDesc, Params: 1,
		Globals: []*codegen.Global{mdSharedDesc, mdSeenDesc}})
	_ = codegen.Register(&codegen.AllocSite{ID: pkg + "mdSite", Name: "mdSite", Var: codegen.AllocSiteVar(&mdSite)})
)

// The kernel specs, with the Enqueue (and EnqueueEvent) that dgen
// generates for them.
type (
	mdAxpy struct {
		X, Y rt.Buffer[float32]
		A    float32
		N    int32
	}
	mdSlowSum struct {
		In, Out rt.Buffer[float32]
		Iters   int32
	}
	mdSet struct {
		B rt.Buffer[float32]
		V float32
	}
	mdBump struct {
		Out rt.Buffer[uint32]
		Add uint32
	}
	mdPeek struct{ Out rt.Buffer[uint32] }
)

func (s *mdAxpy) Enqueue(q *rt.Queue, r rt.Range) error {
	k, err := codegen.Acquire(q, mdAxpyKern)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, s.X)
	codegen.SetBuffer(k, 1, s.Y)
	codegen.SetScalar(k, 2, s.A)
	codegen.SetScalar(k, 3, s.N)
	return codegen.Submit(q, k, r, nil)
}

func (s *mdSlowSum) EnqueueEvent(q *rt.Queue, r rt.Range) (*rt.Event, error) {
	k, err := codegen.Acquire(q, mdSlowSumKern)
	if err != nil {
		return nil, err
	}
	codegen.SetBuffer(k, 0, s.In)
	codegen.SetBuffer(k, 1, s.Out)
	codegen.SetScalar(k, 2, s.Iters)
	return codegen.Launch(q, k, r, nil)
}

func (s *mdSet) Enqueue(q *rt.Queue, r rt.Range) error {
	k, err := codegen.Acquire(q, mdSetKern)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, s.B)
	codegen.SetScalar(k, 1, s.V)
	return codegen.Submit(q, k, r, nil)
}

func (s *mdBump) Enqueue(q *rt.Queue, r rt.Range) error {
	k, err := codegen.Acquire(q, mdBumpKern)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, s.Out)
	codegen.SetScalar(k, 1, s.Add)
	return codegen.Submit(q, k, r, nil)
}

func (s *mdPeek) Enqueue(q *rt.Queue, r rt.Range) error {
	k, err := codegen.Acquire(q, mdPeekKern)
	if err != nil {
		return err
	}
	codegen.SetBuffer(k, 0, s.Out)
	return codegen.Submit(q, k, r, nil)
}

// TestMultiDevice runs the multi-device tests (see the top of this file
// for where).
func TestMultiDevice(t *testing.T) {
	cfg, ok := multiDeviceConfig(t)
	if !ok {
		return
	}
	tests := []struct {
		name string
		run  func(*testing.T, rt.Config)
	}{
		{"program", testMultiProgram},
		{"globals", testMultiGlobals},
		{"reuse", testMultiReuse},
		{"close", testMultiClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, cfg) })
	}
	if !t.Failed() {
		t.Logf("multi-device tests passed on backend %q, devices %q", cfg.Backend, cfg.Device)
	}
}

// multiDeviceConfig returns the configuration of the contexts that the
// multi-device tests open, and true; or, where they are to run on PoCL's
// two devices and this is not the child process that has them, runs that
// child, reports its result and returns false.
func multiDeviceConfig(t *testing.T) (rt.Config, bool) {
	if sel := os.Getenv(testDevicesVar); sel != "" {
		cfg := rt.Config{Device: sel}
		ctx, _ := openMulti(t, cfg) // fails at once where sel selects fewer than two
		for i, d := range ctx.Devices() {
			t.Logf("device %d: %s", i, d)
		}
		return cfg, true
	}
	ps, err := listPlatforms("opencl")
	pocl := -1
	for _, p := range ps {
		if strings.Contains(p.Name, "Portable Computing Language") {
			pocl = p.Index
		}
	}
	if pocl < 0 {
		t.Skipf("no PoCL platform (%v): the multi-device tests run on PoCL's two devices, or where %s selects devices", err, testDevicesVar)
	}
	if os.Getenv("DGEN_TEST_POCL_MULTI") != "" {
		return rt.Config{Backend: "opencl", Device: fmt.Sprintf("%d:*", pocl)}, true
	}
	args := []string{"-test.run=^TestMultiDevice$", "-test.v", "-test.count=1", "-test.timeout=5m"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DGEN_TEST_POCL_MULTI=1", "POCL_DEVICES=pthread pthread")
	out, err := cmd.CombinedOutput()
	t.Logf("child on PoCL's two devices:\n%s", out)
	if err != nil || !strings.Contains(string(out), "multi-device tests passed") {
		t.Fatalf("child on PoCL's two devices: %v; want its tests to pass", err)
	}
	return rt.Config{}, false
}

// openMulti opens a context as cfg says, with a queue on each of its
// devices (the default queue on the first), all closed when the test ends.
// It fails the test unless the context has two devices or more.
func openMulti(t *testing.T, cfg rt.Config) (*rt.Context, []*rt.Queue) {
	t.Helper()
	ctx, err := rt.OpenConfig(withEnv(t, cfg))
	if err != nil {
		t.Fatalf("open %q on backend %q: %v", cfg.Device, cfg.Backend, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	qs, err := deviceQueues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 2 {
		t.Fatalf("%q on backend %q selects %d device, want two or more", cfg.Device, cfg.Backend, len(qs))
	}
	return ctx, qs
}

// deviceQueues returns a queue on each of ctx's devices: the default queue
// on the first, new queues on the others.
func deviceQueues(ctx *rt.Context) ([]*rt.Queue, error) {
	qs := []*rt.Queue{ctx.Queue()}
	for _, d := range ctx.Devices()[1:] {
		q, err := ctx.NewQueue(d)
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// testMultiProgram launches a kernel spec on each device's queue: its
// program is built once, for every device of the context, and each
// device gets its own kernel object.
func testMultiProgram(t *testing.T, cfg rt.Config) {
	ctx, qs := openMulti(t, cfg)
	const n = 4096
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	for round := range 2 {
		for d, q := range qs {
			x, err := rt.NewBuffer[float32](ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			y, err := rt.NewBuffer[float32](ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(x.Write(q, xs), y.Fill(q, 1)); err != nil {
				t.Fatal(err)
			}
			a := float32(d + 2 + round)
			if err := (&mdAxpy{X: x, Y: y, A: a, N: n}).Enqueue(q, rt.Range1(n)); err != nil {
				t.Fatalf("device %d: %v", d, err)
			}
			got := make([]float32, n)
			if err := y.Read(q, got); err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if want := a*float32(i) + 1; v != want {
					t.Fatalf("round %d, device %d (%s): y[%d] = %v, want %v", round, d, q.Device().Name, i, v, want)
				}
			}
			if err := errors.Join(x.Free(), y.Free()); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := ctx.Stats().Cache
	if got := s.Builds + s.DiskHits; got != 1 {
		t.Errorf("program made %d times (%d builds, %d from disk) for %d devices, want once for all of them", got, s.Builds, s.DiskHits, len(qs))
	}
	if s.KernelMisses != int64(len(qs)) {
		t.Errorf("%d kernel cache misses for one kernel spec on %d devices, want one per device", s.KernelMisses, len(qs))
	}
}

// testMultiGlobals checks that each device has its own instance of a
// device global, shared by the programs on that device, and its own
// instance of each program's image-scope global: a write on device 0 is
// seen by kernels of both programs there and by nothing on the others.
func testMultiGlobals(t *testing.T, cfg rt.Config) {
	ctx, qs := openMulti(t, cfg)
	out, err := rt.NewBuffer[uint32](ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	launch := func(q *rt.Queue, spec interface {
		Enqueue(*rt.Queue, rt.Range) error
	}) [2]uint32 {
		t.Helper()
		if err := spec.Enqueue(q, rt.Range1(1)); err != nil {
			t.Fatal(err)
		}
		var got [2]uint32
		if err := out.Read(q, got[:]); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := mdShared.Write(qs[0], 7); err != nil {
		t.Fatal(err)
	}
	// Device d adds 100(d+1) to its mdShared: only device 0 starts at 7.
	shared := make([]uint32, len(qs))
	shared[0] = 7
	for d, q := range qs {
		add := uint32(100 * (d + 1))
		if got, want := launch(q, &mdBump{Out: out, Add: add}), [2]uint32{shared[d], 0}; got != want {
			t.Errorf("device %d: md_bump saw mdShared, mdSteps = %v, want %v", d, got, want)
		}
		shared[d] += add
	}
	if got, want := launch(qs[0], &mdBump{Out: out, Add: 1}), [2]uint32{shared[0], 1}; got != want {
		t.Errorf("device 0, second launch: md_bump saw %v, want %v", got, want)
	}
	shared[0]++
	// md_peek, of another program, sees its device's mdShared; its
	// mdSeen counts its launches on that device alone.
	for d, q := range qs {
		for i := range d + 1 {
			if got, want := launch(q, &mdPeek{Out: out}), [2]uint32{shared[d], uint32(i + 1)}; got != want {
				t.Errorf("device %d, launch %d: md_peek saw mdShared, mdSeen = %v, want %v", d, i, got, want)
			}
		}
	}
	for d, q := range qs {
		steps := uint32(1)
		if d == 0 {
			steps = 2
		}
		for _, g := range []struct {
			name string
			v    *rt.DeviceGlobal[uint32]
			want uint32
		}{{"mdShared", &mdShared, shared[d]}, {"mdSteps", &mdSteps, steps}, {"mdSeen", &mdSeen, uint32(d + 1)}} {
			if got, err := g.v.Read(q); err != nil || got != g.want {
				t.Errorf("device %d: %s = %d, %v; want %d", d, g.name, got, err, g.want)
			}
		}
	}
}

// mdWork returns the elements and re-reads of testMultiReuse's slow
// kernel on dev: long enough that the host sees it still running.
func mdWork(dev *rt.Device) (n, iters int) {
	if dev.Type == rt.DeviceGPU {
		return 1 << 20, 4000
	}
	return 1 << 16, 400
}

// testMultiReuse frees a tagged block while a kernel on device 0 still
// reads it and allocates it again at once on device 1's queue, where a
// kernel overwrites it: stream-ordered reuse must make device 1 wait for
// device 0 on the devices, without the host waiting. Each device has its
// own allocator, so the block is made on device 1, whose free list it
// goes back to; its last use before the reuse is on device 0.
func testMultiReuse(t *testing.T, cfg rt.Config) {
	ctx, qs := openMulti(t, cfg)
	q0, q1 := qs[0], qs[1]
	n, iters := mdWork(q0.Device())
	trials := 20
	if testing.Short() {
		trials = 5
	}
	sum, err := rt.NewBuffer[float32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer sum.Free()
	var bad, running int
	for trial := range trials {
		b, r, err := reuseTrial(q0, q1, sum, n, iters)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		bad += b
		if r {
			running++
		}
	}
	if bad != 0 {
		t.Errorf("%d of %d elements wrong in %d trials: device 1 overwrote the block while device 0 read it", bad, 2*n*trials, trials)
	}
	switch {
	case running == 0 && movesOnHost(q1.Device()):
		// A raw C probe (bench/multiprobe, in git history): on two H200s,
		// clEnqueueNDRangeKernel on GPU 1 over a buffer that a running
		// kernel on GPU 0 uses returns when that kernel has completed
		// (37 ms), and so does clEnqueueMigrateMemObjects; a marker that
		// waits across the GPUs does not block.
		t.Logf("device 0's kernel had completed when device 1's kernel over the reused block was enqueued in all %d trials: NVIDIA's OpenCL moves a buffer between GPUs from the host", trials)
	case running == 0:
		t.Errorf("device 0's kernel had completed when the reuse returned in all %d trials: the reuse waited on the host, or the kernel is too short", trials)
	}
	st := ctx.Stats().Alloc
	var dev1 alloc.TagStats
	for _, d := range st.Devices {
		if d.Index == 1 {
			dev1 = d.Stats.Tag(alloc.Tag(mdSite.Tag()))
		}
	}
	if dev1.Reuses < uint64(trials) || dev1.Ordered == 0 {
		t.Errorf("device 1's allocator: %d reuses, %d ordered after %d trials; want a reuse per trial, some ordered\n%v", dev1.Reuses, dev1.Ordered, trials, st)
	}
	t.Logf("%d trials of %d elements × %d re-reads: device 0's kernel still running at %d reuses; device 1: %d reuses, %d ordered", trials, n, iters, running, dev1.Reuses, dev1.Ordered)
}

// reuseTrial is one trial of testMultiReuse. It returns the number of wrong
// elements (of the sum on device 0 and the block as device 1 wrote it),
// and whether device 0's kernel was still running when the reuse had been
// made and device 1's kernel enqueued.
func reuseTrial(q0, q1 *rt.Queue, sum rt.Buffer[float32], n, iters int) (bad int, running bool, err error) {
	in, err := mdSite.Alloc(q1, n)
	if err != nil {
		return 0, false, err
	}
	if err := in.Fill(q0, 1); err != nil {
		return 0, false, err
	}
	slow, err := (&mdSlowSum{In: in, Out: sum, Iters: int32(iters)}).EnqueueEvent(q0, rt.Range1(n))
	if err != nil {
		return 0, false, err
	}
	defer slow.Release()
	if err := q0.Flush(); err != nil {
		return 0, false, err
	}
	inMem := memOf(in)
	if err := in.Free(); err != nil {
		return 0, false, err
	}
	re, err := mdSite.Alloc(q1, n)
	if err != nil {
		return 0, false, err
	}
	defer re.Free()
	if memOf(re).BlockID() != inMem.BlockID() {
		return 0, false, errors.New("device 1's allocation did not reuse the block freed after device 0's use")
	}
	if err := (&mdSet{B: re, V: 2}).Enqueue(q1, rt.Range1(n)); err != nil {
		return 0, false, err
	}
	st, err := ce(slow).Status()
	if err != nil {
		return 0, false, err
	}
	got, back := make([]float32, n), make([]float32, n)
	if err := errors.Join(sum.Read(q0, got), re.Read(q1, back)); err != nil {
		return 0, false, err
	}
	for i := range got {
		if got[i] != float32(iters) {
			bad++
		}
		if back[i] != 2 {
			bad++
		}
	}
	return bad, st != driver.StatusComplete, nil
}

// mdCall is a kind of call that races Context.Close in testMultiClose: it
// runs on qs[d] (and the next device's queue), and checks what it reads.
type mdCall struct {
	name string
	call func(ctx *rt.Context, qs []*rt.Queue, d int, seen *uint32) error
}

var mdCalls = []mdCall{
	{"enqueue", func(_ *rt.Context, qs []*rt.Queue, d int, _ *uint32) (err error) {
		q := qs[d]
		x, err := rt.Alloc[float32](q, 256)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, x.Free()) }()
		y, err := mdSite.Alloc(q, 256)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, y.Free()) }()
		if err := errors.Join(x.Fill(q, 3), y.Fill(q, 1)); err != nil {
			return err
		}
		if err := (&mdAxpy{X: x, Y: y, A: 2, N: 256}).Enqueue(q, rt.Range1(256)); err != nil {
			return err
		}
		return readAll(q, y, 7)
	}},
	{"global", func(_ *rt.Context, qs []*rt.Queue, d int, seen *uint32) error {
		*seen++
		v := *seen<<8 | uint32(d)
		if err := mdShared.Write(qs[d], v); err != nil {
			return err
		}
		got, err := mdShared.Read(qs[d])
		if err == nil && got != v {
			err = fmt.Errorf("mdShared on device %d = %#x, wrote %#x", d, got, v)
		}
		return err
	}},
	{"peek", func(ctx *rt.Context, qs []*rt.Queue, d int, seen *uint32) (err error) {
		out, err := rt.NewBuffer[uint32](ctx, 2)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, out.Free()) }()
		if err := (&mdPeek{Out: out}).Enqueue(qs[d], rt.Range1(1)); err != nil {
			return err
		}
		var got [2]uint32
		if err := out.Read(qs[d], got[:]); err != nil {
			return err
		}
		// This goroutine alone runs md_peek on device d.
		if *seen++; got[1] != *seen {
			return fmt.Errorf("mdSeen on device %d = %d after %d launches", d, got[1], *seen)
		}
		return nil
	}},
	{"cross", func(_ *rt.Context, qs []*rt.Queue, d int, _ *uint32) (err error) {
		// A block of device d, written on the next device, read back on d.
		other := qs[(d+1)%len(qs)]
		b, err := mdSite.Alloc(qs[d], 512)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, b.Free()) }()
		if err := (&mdSet{B: b, V: float32(d + 5)}).Enqueue(other, rt.Range1(512)); err != nil {
			return err
		}
		if err := other.Finish(); err != nil {
			return err
		}
		return readAll(qs[d], b, float32(d+5))
	}},
	{"queue", func(ctx *rt.Context, qs []*rt.Queue, d int, _ *uint32) error {
		q, err := ctx.NewQueue(ctx.Devices()[d])
		if err != nil {
			return err
		}
		if err := released(q.Marker()); err != nil {
			return err
		}
		return q.Finish()
	}},
}

// readAll reads b on q and returns an error unless every element is want.
func readAll(q *rt.Queue, b rt.Buffer[float32], want float32) error {
	got := make([]float32, b.Len())
	if err := b.Read(q, got); err != nil {
		return err
	}
	for i, v := range got {
		if v != want {
			return fmt.Errorf("element %d on %q = %v, want %v", i, q.Device().Name, v, want)
		}
	}
	return nil
}

// testMultiClose closes a context while goroutines, one per kind of call
// and device, launch on every device: Close returns no error and no call
// crashes or hangs (the round must end within a minute); every error wraps
// rt.ErrClosed; a call that begins after Close has returned fails; and every
// call that succeeds read the right values.
func testMultiClose(t *testing.T, cfg rt.Config) {
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	var calls, afterClose int
	cfg = withEnv(t, cfg)
	for round := range rounds {
		res := make(chan closeRound, 1)
		go func() { res <- closeRace(cfg, time.Duration(rand.IntN(4000))*time.Microsecond) }()
		select {
		case r := <-res:
			for _, err := range r.errs {
				t.Errorf("round %d: %v", round, err)
			}
			calls += r.calls
			afterClose += r.afterClose
		case <-time.After(time.Minute):
			buf := make([]byte, 1<<20)
			t.Fatalf("round %d: not done after a minute; goroutines:\n%s", round, buf[:runtime.Stack(buf, true)])
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d rounds: %d calls succeeded, %d refused after Close returned", rounds, calls, afterClose)
}

// closeRound is what one round of testMultiClose saw.
type closeRound struct {
	errs       []error
	calls      int // calls that succeeded
	afterClose int // calls that began after Close returned (each failed, or is in errs)
}

// closeRace opens a context as cfg says, runs every kind of mdCalls on
// every device in a goroutine of its own, each in a loop until it fails,
// closes the context after delay, and calls each kind once more on each
// device.
func closeRace(cfg rt.Config, delay time.Duration) (r closeRound) {
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return closeRound{errs: []error{err}}
	}
	qs, err := deviceQueues(ctx)
	seen := make([][]uint32, len(mdCalls)) // per kind and device
	for i := range seen {
		seen[i] = make([]uint32, len(qs))
	}
	// One call of each kind first, so that Close races launches rather
	// than builds.
	for i, c := range mdCalls {
		for d := range qs {
			if err == nil {
				err = c.call(ctx, qs, d, &seen[i][d])
			}
		}
	}
	if err != nil {
		ctx.Close()
		return closeRound{errs: []error{fmt.Errorf("before Close: %w", err)}}
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		closed atomic.Bool // Close has returned
		start  = make(chan struct{})
	)
	for i, c := range mdCalls {
		for d := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					after := closed.Load()
					err := safeCall(c, ctx, qs, d, &seen[i][d])
					mu.Lock()
					switch {
					case err == nil && after:
						r.errs = append(r.errs, fmt.Errorf("%s on device %d succeeded after Close returned", c.name, d))
					case err == nil:
						r.calls++
					case after:
						r.afterClose++
					}
					if err != nil && !errors.Is(err, rt.ErrClosed) {
						r.errs = append(r.errs, fmt.Errorf("%s on device %d: %w", c.name, d, err))
					}
					mu.Unlock()
					if err != nil || after {
						return
					}
				}
			}()
		}
	}
	close(start)
	time.Sleep(delay)
	if err := ctx.Close(); err != nil {
		r.errs = append(r.errs, fmt.Errorf("Close: %w", err))
	}
	closed.Store(true)
	wg.Wait()
	for i, c := range mdCalls {
		for d := range qs {
			if err := safeCall(c, ctx, qs, d, &seen[i][d]); !errors.Is(err, rt.ErrClosed) {
				r.errs = append(r.errs, fmt.Errorf("%s on device %d after Close: %v, want an error wrapping ErrClosed", c.name, d, err))
			}
		}
	}
	return r
}

// safeCall calls c, turning a panic into an error.
func safeCall(c mdCall, ctx *rt.Context, qs []*rt.Queue, d int, seen *uint32) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return c.call(ctx, qs, d, seen)
}

// movesOnHost reports whether dev's driver moves a buffer from one device
// of a context to another synchronously from the host: NVIDIA's OpenCL
// (platform "NVIDIA CUDA"), found with a raw C probe (bench/multiprobe,
// in git history).
func movesOnHost(dev *rt.Device) bool {
	return dev.Platform == "NVIDIA CUDA"
}
