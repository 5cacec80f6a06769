package rt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
)

// A program whose kernel reads and counts a device global, registered by
// hand as dgen registers it: gw_count writes the global's value to out[0]
// and adds one to it.
const gwImage = `
__kernel void gw_count(__global int *out, __global int* __dgen_g_gwCount) {
	out[0] = *__dgen_g_gwCount;
	*__dgen_g_gwCount += 1;
}
`

var (
	gwProg  rt.Program
	gwCount rt.DeviceGlobal[int32]

	_gwCount = codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&gwCount), ID: pkg + "gwCount"})
	_gwProg  = codegen.Register(&codegen.Program{Var: codegen.ProgramVar(&gwProg), ID: pkg + "gwProg", Name: "gw.cl", Image: gwImage})
	gwKern   = codegen.Register(&codegen.Kernel{ID: pkg + "gwCount_k", Name: "gw_count", Program: _gwProg, Params: 1,
		Globals: []*codegen.Global{_gwCount}})
)

// gwRun is the kernel spec of gw_count, with the Enqueue forms dgen
// generates.
type gwRun struct{ Out rt.Buffer[int32] }

func (s *gwRun) Enqueue(q *rt.Queue, r rt.Range) error {
	return s.EnqueueContext(context.Background(), q, r)
}

func (s *gwRun) EnqueueContext(ctx context.Context, q *rt.Queue, r rt.Range) error {
	k, err := codegen.AcquireContext(ctx, q, gwKern)
	if err != nil {
		return err
	}
	codegen.SetBuffer[int32](k, 0, s.Out)
	return codegen.Submit(q, k, r, nil)
}

// TestGlobalFirstUseDeadline: the first use of a device global, which makes
// its storage, by a launch queued behind a kernel that runs until the test
// ends it, returns within the launch's deadline (plus 1 ms): the storage's
// zero fill is ordered on the queue, not waited for. A launch on another
// queue meanwhile waits for the fill on the device, and both kernels see
// the global zero-initialised.
func TestGlobalFirstUseDeadline(t *testing.T) {
	// A context of its own first builds the program and has PoCL make the
	// kernel's work-group function, so that the test's launch compiles
	// nothing.
	warm := openCPU(t)
	wb, err := rt.NewBuffer[int32](warm, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join((&gwRun{Out: wb}).Enqueue(warm.Queue(), rt.Range1(1)), warm.Queue().Finish()); err != nil {
		t.Fatal(err)
	}

	ctx := openCPU(t)
	dev := ctx.Devices()[0]
	var qs [3]*rt.Queue
	for i := range qs {
		if qs[i], err = ctx.NewQueue(dev); err != nil {
			t.Fatal(err)
		}
	}
	q, other, ctl := qs[0], qs[1], qs[2]
	if err := gwProg.Build(context.Background(), ctx); err != nil {
		t.Fatal(err)
	}
	// Memory that the driver may hand the global's storage: not zero.
	dirty, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(dirty.Write(ctl, []int32{0x7777}), dirty.Free()); err != nil {
		t.Fatal(err)
	}
	var out [2]rt.Buffer[int32]
	for i := range out {
		if out[i], err = rt.NewBuffer[int32](ctx, 1); err != nil {
			t.Fatal(err)
		}
		defer out[i].Free()
		if err := out[i].Write(ctl, []int32{-1}); err != nil {
			t.Fatal(err)
		}
	}

	running, stop := spinOn(t, ctx, q, ctl, 3*time.Second)
	const deadline = 20 * time.Millisecond
	c, cancel := context.WithTimeout(context.Background(), deadline)
	t0 := time.Now()
	err = (&gwRun{Out: out[0]}).EnqueueContext(c, q, rt.Range1(1))
	took := time.Since(t0)
	cancel()
	if err != nil {
		t.Fatalf("EnqueueContext: %v", err)
	}
	t.Logf("the launch that made the global's storage returned after %v (deadline %v)", took, deadline)
	if took > deadline+time.Millisecond {
		t.Errorf("the launch that made the global's storage returned after %v; want within its deadline %v plus 1 ms", took, deadline)
	}

	if err := (&gwRun{Out: out[1]}).Enqueue(other, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	ev, err := other.Marker()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	if err := other.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if s, err := ce(ev).Status(); err != nil || s == driver.StatusComplete {
		t.Errorf("the launch on another queue completed (status %v, %v) before the global's zero fill, queued behind the spinning kernel", s, err)
	}
	if !running() {
		t.Fatal("the spinning kernel ended by itself before the checks: its bound is too short for this machine")
	}
	stop()
	if err := errors.Join(ev.Wait(), q.Finish()); err != nil {
		t.Fatal(err)
	}
	var got [2]int32
	for i := range out {
		v := make([]int32, 1)
		if err := out[i].Read(ctl, v); err != nil {
			t.Fatal(err)
		}
		got[i] = v[0]
	}
	// The two kernels ran after the fill, in either order.
	if got != [2]int32{0, 1} && got != [2]int32{1, 0} {
		t.Errorf("the kernels read the global as %v; want 0 and 1, in either order, from a zero-initialised global", got)
	}
	if v, err := gwCount.Read(ctl); err != nil || v != 2 {
		t.Errorf("the global holds %d (%v); want 2", v, err)
	}
}
