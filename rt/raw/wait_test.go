package raw_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// spinSrc's kernel runs until the host sets *flag (from another queue),
// or, should that never come, for a bounded number of iterations.
const spinSrc = `
__kernel void spin(__global volatile int *flag, __global int *out) {
	long n = 0;
	while (flag[0] == 0 && n < 20000000000L) n++;
	out[0] = flag[0];
}`

// spinning launches spinSrc's kernel on ctx's queue and returns its event
// and the function that ends it, from a second queue, and checks, once it
// has, that the kernel ended there: it ran until then.
func spinning(t *testing.T, ctx *rt.Context) (*rt.Event, func()) {
	t.Helper()
	q := ctx.Queue()
	k := kernel(t, build(t, ctx, "spin", spinSrc, ""), "spin")
	flag, _ := rt.NewBuffer[int32](ctx, 1)
	out, _ := rt.NewBuffer[int32](ctx, 1)
	t.Cleanup(func() { flag.Free(); out.Free() })
	if err := flag.Write(q, []int32{0}); err != nil {
		t.Fatal(err)
	}
	raw.SetBuffer(k, 0, flag)
	raw.SetBuffer(k, 1, out)
	q2, err := ctx.NewQueue(q.Device()) // before the launch: it waits for the device
	if err != nil {
		t.Fatal(err)
	}
	ev, err := raw.Launch(q, k, rt.Range1(1))
	if err != nil {
		t.Fatal(err)
	}
	stop := func() {
		if err := flag.Write(q2, []int32{1}); err != nil {
			t.Error(err)
		}
		if got := read(t, q, out); got[0] != 1 {
			t.Errorf("the kernel ended before the test ended it")
		}
	}
	return ev, stop
}

// TestWaitContext cancels a wait for a kernel that runs until the test
// ends it: WaitContext returns the context's error while the kernel runs
// on, and a later wait sees it complete.
func TestWaitContext(t *testing.T) {
	ctx := open(t)
	ev, stop := spinning(t, ctx)
	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			c, cancel := context.WithCancel(context.Background())
			cancel()
			return c, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		wctx, cancel := c.ctx()
		err := ev.WaitContext(wctx)
		cancel()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: WaitContext = %v, want %v", c.name, err, c.want)
		}
	}
	if err := ev.Release(); err != nil { // a background wait holds the driver event: Release must not wait for it
		t.Fatal(err)
	}
	stop()
}

// TestFinishContext cancels a Finish of a queue whose kernel runs until
// the test ends it.
func TestFinishContext(t *testing.T) {
	ctx := open(t)
	_, stop := spinning(t, ctx)
	c, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := ctx.Queue().FinishContext(c); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("FinishContext = %v, want context.DeadlineExceeded", err)
	}
	stop()
	c2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	if err := ctx.Queue().FinishContext(c2); err != nil {
		t.Errorf("FinishContext after the kernel ended: %v", err)
	}
}

// TestBuildContext builds with a context that is done: an error wrapping
// its error, and nothing built; then with one that is not.
func TestBuildContext(t *testing.T) {
	ctx := open(t)
	c, cancel := context.WithCancel(context.Background())
	cancel()
	src := nullSrc + "// " + t.Name() + time.Now().String() + "\n"
	if _, err := raw.BuildContext(c, ctx, "cancelled", src, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("BuildContext with a cancelled context = %v, want context.Canceled", err)
	}
	before := ctx.Stats().Cache.Builds
	p, err := raw.BuildContext(context.Background(), ctx, "built", src, "")
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if n := ctx.Stats().Cache.Builds - before; n != 1 {
		t.Errorf("%d builds, want 1", n)
	}
}
