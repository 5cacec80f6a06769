package rt_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// outSite stands for the site that generated code registers for a
// dgen:"out" field (Spec.Out), registered by hand as a generated init would.
var (
	outSite rt.AllocSite[float32]
	_       = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar(&outSite), ID: "github.com/dgen-go/dgen/rt_test.Spec.Out", Name: "Spec.Out"})
)

// crossSource reads its input slowly on one queue, while another queue
// may write the same block: slow_sum re-reads in[i] iters times through a
// volatile pointer (no load may be hoisted), set overwrites a buffer.
const crossSource = `
__kernel void slow_sum(__global volatile const float* in, __global float* out, int iters) {
	size_t i = get_global_id(0);
	float s = 0.0f;
	for (int j = 0; j < iters; j++) s += in[i];
	out[i] = s;
}
__kernel void set(__global float* b, float v) { b[get_global_id(0)] = v; }
`

// crossQueueRig is the program of issue 12: allocate on queue A, read the
// block in a slow kernel there, free it, allocate from the same path on
// queue B and overwrite it there at once.
type crossQueueRig struct {
	ctx          *rt.Context
	qa, qb       *rt.Queue
	slowSum, set *raw.Kernel
}

func newCrossQueueRig(t testing.TB, policy rt.AllocPolicy) *crossQueueRig {
	return newCrossQueueRigConfig(t, rt.Config{AllocPolicy: policy})
}

func newCrossQueueRigConfig(t testing.TB, cfg rt.Config) *crossQueueRig {
	ctx := openCPUConfig(t, cfg)
	qb, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	return &crossQueueRig{ctx: ctx, qa: ctx.Queue(), qb: qb,
		slowSum: kernelOf(t, ctx, crossSource, "slow_sum"), set: kernelOf(t, ctx, crossSource, "set")}
}

// trial runs the program once with n elements and iters re-reads, and
// returns the number of elements of A's sum that B's write corrupted.
func (r *crossQueueRig) trial(alloc func(*rt.Queue, int) (rt.Buffer[float32], error), n, iters int) (int, error) {
	in, err := alloc(r.qa, n)
	if err != nil {
		return 0, err
	}
	if err := released(in.Fill(r.qa, 1)); err != nil {
		return 0, err
	}
	sum, err := rt.NewBuffer[float32](r.ctx, n)
	if err != nil {
		return 0, err
	}
	defer sum.Free()
	if err := errors.Join(raw.SetBuffer(r.slowSum, 0, in), raw.SetBuffer(r.slowSum, 1, sum), raw.SetArg(r.slowSum, 2, int32(iters))); err != nil {
		return 0, err
	}
	if err := raw.Submit(r.qa, r.slowSum, rt.Range1(n)); err != nil {
		return 0, err
	}
	if err := r.qa.Flush(); err != nil {
		return 0, err
	}
	inMem := memOf(in)
	if err := in.Free(); err != nil {
		return 0, err
	}
	reused, err := alloc(r.qb, n)
	if err != nil {
		return 0, err
	}
	defer reused.Free()
	if memOf(reused).BlockID() != inMem.BlockID() {
		return 0, errors.New("not the same block")
	}
	if err := errors.Join(raw.SetBuffer(r.set, 0, reused), raw.SetArg(r.set, 1, float32(2))); err != nil {
		return 0, err
	}
	if err := raw.Submit(r.qb, r.set, rt.Range1(n)); err != nil {
		return 0, err
	}
	got := make([]float32, n)
	if err := sum.Read(r.qa, got); err != nil {
		return 0, err
	}
	back := make([]float32, n)
	if err := reused.Read(r.qb, back); err != nil {
		return 0, err
	}
	bad := 0
	for i := range got {
		if got[i] != float32(iters) || back[i] != 2 {
			bad++
		}
	}
	return bad, nil
}

// crossQueuePaths are the allocation paths that reuse blocks.
var crossQueuePaths = []struct {
	name  string
	alloc func(*rt.Queue, int) (rt.Buffer[float32], error)
}{
	{"tagged-site", siteA.Alloc},
	{"out-field", outSite.Alloc},
	{"untagged-pool", rt.Alloc[float32]},
}

// TestCrossQueueReuse is issue 12's corruption program on PoCL: a block
// freed while a kernel on queue A still reads it, reused at once on queue B
// and overwritten there. Stream-ordered reuse makes B wait for A: no element
// may be corrupted in 50 trials, on each allocation path and policy.
func TestCrossQueueReuse(t *testing.T) {
	const n, iters, trials = 1 << 16, 400, 50
	for _, policy := range []rt.AllocPolicy{rt.AllocFull, rt.AllocBestFit} {
		for _, path := range crossQueuePaths {
			t.Run(policy.String()+"/"+path.name, func(t *testing.T) {
				r := newCrossQueueRig(t, policy)
				var bad int
				for range trials {
					b, err := r.trial(path.alloc, n, iters)
					if err != nil {
						t.Fatal(err)
					}
					bad += b
				}
				s := r.ctx.Stats().Alloc.Total()
				if bad != 0 {
					t.Errorf("%d of %d elements corrupted in %d trials", bad, n*trials, trials)
				}
				if s.Reuses < trials || s.Ordered == 0 {
					t.Errorf("stats %+v: want a reuse per trial, some of them ordered", s)
				}
				t.Logf("%d reuses, %d ordered", s.Reuses, s.Ordered)
			})
		}
	}
}

// counting is a backend over OpenCL that counts the markers its queues
// enqueue: stream-ordered reuse makes its waits with markers.
type counting struct{ markers atomic.Int64 }

func (c *counting) Platforms() ([]driver.PlatformInfo, error) { return opencl.Backend{}.Platforms() }

func (c *counting) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	d, err := opencl.Backend{}.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return countingCtx{d, c}, nil
}

type countingCtx struct {
	driver.Context
	c *counting
}

func (c countingCtx) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	q, err := c.Context.NewQueue(dev, profiling)
	return countingQueue{q, c.c}, err
}

type countingQueue struct {
	driver.Queue
	c *counting
}

func (q countingQueue) Marker(wait []driver.Event) (driver.Event, error) {
	q.c.markers.Add(1)
	return q.Queue.Marker(wait)
}

// TestSameQueueReuseNoMarker checks that reuse on the queue of the last use
// enqueues no marker, and that reuse on another queue enqueues two (one on
// each queue), on every allocation path.
func TestSameQueueReuseNoMarker(t *testing.T) {
	c := &counting{}
	name := fmt.Sprintf("counting%d", faultyN.Add(1))
	driver.Register(name, c)
	r := newCrossQueueRigConfig(t, rt.Config{Backend: rt.Backend(name)})
	const n = 1024
	for _, path := range crossQueuePaths {
		t.Run(path.name, func(t *testing.T) {
			in, err := path.alloc(r.qa, n)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				out, err := path.alloc(r.qa, n)
				if err != nil {
					t.Fatal(err)
				}
				if err := released(in.CopyTo(r.qa, out)); err != nil {
					t.Fatal(err)
				}
				if err := errors.Join(raw.SetBuffer(r.set, 0, out), raw.SetArg(r.set, 1, float32(1))); err != nil {
					t.Fatal(err)
				}
				if err := raw.Submit(r.qa, r.set, rt.Range1(n)); err != nil {
					t.Fatal(err)
				}
				if err := in.Free(); err != nil {
					t.Fatal(err)
				}
				in = out
			}
			if got := c.markers.Swap(0); got != 0 {
				t.Errorf("same queue: %d markers, want 0", got)
			}
			if err := in.Free(); err != nil {
				t.Fatal(err)
			}
			other, err := path.alloc(r.qb, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.markers.Swap(0); got != 2 {
				t.Errorf("other queue: %d markers, want 2", got)
			}
			if err := other.Free(); err != nil {
				t.Fatal(err)
			}
			// Once queue B has finished, its uses are known complete.
			if err := r.qb.Finish(); err != nil {
				t.Fatal(err)
			}
			again, err := path.alloc(r.qa, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.markers.Swap(0); got != 0 {
				t.Errorf("after Finish: %d markers, want 0", got)
			}
			again.Free()
		})
	}
}

// released releases the event of a command that succeeded: nothing waits
// for it.
func released(ev *rt.Event, err error) error {
	if err != nil {
		return err
	}
	return ev.Release()
}

// TestReuseMarkersFakeDriver counts the fake driver's calls: reuse on the
// queue of the last use makes none beyond the launch's; reuse on another
// queue makes two markers (one on each queue) and one flush (of the old
// queue), on every allocation path.
func TestReuseMarkersFakeDriver(t *testing.T) {
	ctx := openFake(t, nil)
	qa := ctx.Queue()
	qb, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	k := kernelOf(t, ctx, "__kernel void set(__global float* b, float v) {}", "set")
	calls := func() [2]int64 { return [2]int64{fakeStats.markers.Load(), fakeStats.flushes.Load()} }
	for _, path := range crossQueuePaths {
		t.Run(path.name, func(t *testing.T) {
			use := func(q *rt.Queue, b rt.Buffer[float32]) {
				t.Helper()
				if err := errors.Join(raw.SetBuffer(k, 0, b), raw.SetArg(k, 1, float32(1)), raw.Submit(q, k, rt.Range1(b.Len()))); err != nil {
					t.Fatal(err)
				}
			}
			b, err := path.alloc(qa, 64)
			if err != nil {
				t.Fatal(err)
			}
			use(qa, b)
			before := calls()
			for range 10 {
				if err := b.Free(); err != nil {
					t.Fatal(err)
				}
				if b, err = path.alloc(qa, 64); err != nil {
					t.Fatal(err)
				}
				use(qa, b)
			}
			if got := calls(); got != before {
				t.Errorf("same queue: %d markers, %d flushes; want none", got[0]-before[0], got[1]-before[1])
			}
			if err := b.Free(); err != nil {
				t.Fatal(err)
			}
			before = calls()
			if b, err = path.alloc(qb, 64); err != nil {
				t.Fatal(err)
			}
			if got := calls(); got[0]-before[0] != 2 || got[1]-before[1] != 1 {
				t.Errorf("other queue: %d markers, %d flushes; want 2 and 1", got[0]-before[0], got[1]-before[1])
			}
			b.Free()
		})
	}
}

// kernelOf builds src on ctx (once: the program is named by its source's
// checksum) and returns its kernel called name, released when the test
// ends.
func kernelOf(t testing.TB, ctx *rt.Context, src, name string) *raw.Kernel {
	t.Helper()
	prog, err := raw.Build(ctx, fmt.Sprintf("src%08x", crc32.ChecksumIEEE([]byte(src))), src, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	k, err := prog.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Release() })
	return k
}
