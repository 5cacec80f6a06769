package rt_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/raw"
)

// spinSource's kernel runs until the host sets *flag, from another queue,
// or for limit iterations.
const spinSource = `
__kernel void spin(__global volatile int *flag, ulong limit) {
	ulong n = 0;
	while (flag[0] == 0 && n < limit) n++;
}`

// spinOn launches spinSource's kernel on q, bounded to run for about max,
// and returns functions that report whether it still runs and that end it
// from the queue other.
//
// On NVIDIA's OpenCL (H200, driver 580) the write that ends the kernel
// waits for it to end by itself when a kernel object made while it runs
// is launched behind it on q (as the first launch of a kernel in a fresh
// context is), so there stop returns after about max. A test that relies
// on the kernel running checks running afterwards: a bound too short for
// the machine then fails the test instead of passing it by luck.
func spinOn(t *testing.T, ctx *rt.Context, q, other *rt.Queue, max time.Duration) (running func() bool, stop func()) {
	t.Helper()
	flag, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Free() })
	if err := flag.Write(other, []int32{0}); err != nil {
		t.Fatal(err)
	}
	k := kernelOf(t, ctx, spinSource, "spin")
	if err := raw.SetBuffer(k, 0, flag); err != nil {
		t.Fatal(err)
	}
	n := itersFor(t, q, max, func(n uint64) error {
		return errors.Join(raw.SetArg(k, 1, n), raw.Submit(q, k, rt.Range1(1)))
	})
	if err := errors.Join(raw.SetArg(k, 1, n), raw.Submit(q, k, rt.Range1(1)), q.Flush()); err != nil {
		t.Fatal(err)
	}
	ev, err := q.Marker()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Release() })
	running = func() bool {
		s, err := ce(ev).Status()
		return err == nil && s != driver.StatusComplete
	}
	stop = func() {
		if err := errors.Join(flag.Write(other, []int32{1}), q.Finish()); err != nil {
			t.Error(err)
		}
	}
	return running, stop
}

var (
	ctxGlobal rt.DeviceGlobal[int32]
	_         = codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&ctxGlobal), ID: pkg + "ctxGlobal"})
)

// TestContextForms cancels each Context form of a blocking call while it
// waits for a kernel that runs until the test ends it: the call returns
// within 100 ms of the cancellation with an error wrapping
// context.Canceled, having copied nothing, and the queue and the memory
// work afterwards.
func TestContextForms(t *testing.T) {
	ctx := openCPU(t)
	dev := ctx.Devices()[0]
	q, err := ctx.NewQueue(dev)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ctx.NewQueue(dev)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	want := []int32{1, 2, 3, 4}
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.SignedInt32, Width: 4, Height: 1})
	images := err == nil
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		t.Logf("the image forms are left out: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		defer img.Free()
		if err := img.Write(q, rt.ImageRegion{}, want); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(buf.Write(q, want), ctxGlobal.Write(q, 7)); err != nil {
		t.Fatal(err)
	}
	dst := []int32{-1, -1, -1, -1}
	bytes := []byte{9, 9, 9, 9}
	tests := contextForms(q, buf, img, dst, bytes)
	for _, tt := range tests {
		if !images && strings.HasPrefix(tt.name, "Image.") {
			continue
		}
		running, stop := spinOn(t, ctx, q, other, 2*time.Second)
		cancelMidWait(t, tt.name, tt.call)
		if !running() {
			t.Errorf("%s: the spinning kernel ended by itself before the check: its bound is too short for this machine", tt.name)
		}
		stop()
		if !slices.Equal(dst, []int32{-1, -1, -1, -1}) || !slices.Equal(bytes, []byte{9, 9, 9, 9}) {
			t.Errorf("%s: the host memory changed after the call: %v %v", tt.name, dst, bytes)
		}
		got := make([]int32, 4)
		if err := buf.Read(q, got); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: the buffer holds %v (%v) after the call, want %v", tt.name, got, err, want)
		}
		if err := img.Read(q, rt.ImageRegion{}, got); images && (err != nil || !slices.Equal(got, want)) {
			t.Errorf("%s: the image holds %v (%v) after the call, want %v", tt.name, got, err, want)
		}
		if v, err := ctxGlobal.Read(q); err != nil || v != 7 {
			t.Errorf("%s: the global holds %v (%v) after the call, want 7", tt.name, v, err)
		}
	}
	// Not cancelled, each form copies.
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make([]int32, 4)
	if err := errors.Join(buf.WriteContext(c, q, []int32{5, 6, 7, 8}), buf.ReadContext(c, q, got)); err != nil || !slices.Equal(got, []int32{5, 6, 7, 8}) {
		t.Errorf("WriteContext and ReadContext: %v, %v", got, err)
	}
	if err := ctxGlobal.WriteContext(c, q, 9); err != nil {
		t.Error(err)
	}
	if v, err := ctxGlobal.ReadContext(c, q); err != nil || v != 9 {
		t.Errorf("DeviceGlobal.ReadContext = %v, %v; want 9", v, err)
	}
}

// contextForm is a call of a Context form, by name.
type contextForm struct {
	name string
	call func(c context.Context) error
}

// contextForms returns a call of each Context form of a blocking call on
// q, on buf, img and ctxGlobal, reading into dst and bytes.
func contextForms(q *rt.Queue, buf rt.Buffer[int32], img rt.Image, dst []int32, bytes []byte) []contextForm {
	return []contextForm{
		{"Buffer.ReadContext", func(c context.Context) error { return buf.ReadContext(c, q, dst) }},
		{"Buffer.ReadAtContext", func(c context.Context) error { return buf.ReadAtContext(c, q, 1, dst[:2]) }},
		{"Buffer.WriteContext", func(c context.Context) error { return buf.WriteContext(c, q, []int32{0, 0}) }},
		{"Buffer.WriteAtContext", func(c context.Context) error { return buf.WriteAtContext(c, q, 2, []int32{0}) }},
		{"Image.ReadContext", func(c context.Context) error { return img.ReadContext(c, q, rt.ImageRegion{}, dst) }},
		{"Image.WriteContext", func(c context.Context) error {
			return img.WriteContext(c, q, rt.ImageRegion{}, []int32{0, 0, 0, 0})
		}},
		{"DeviceGlobal.ReadContext", func(c context.Context) error { _, err := ctxGlobal.ReadContext(c, q); return err }},
		{"DeviceGlobal.WriteContext", func(c context.Context) error { return ctxGlobal.WriteContext(c, q, 0) }},
		{"DeviceGlobal.ReadBytesContext", func(c context.Context) error { return ctxGlobal.ReadBytesContext(c, q, 0, bytes) }},
		{"DeviceGlobal.WriteBytesContext", func(c context.Context) error { return ctxGlobal.WriteBytesContext(c, q, 0, []byte{0}) }},
		{"NewPinnedContext", func(c context.Context) error {
			p, err := rt.NewPinnedContext[int32](c, q, 4)
			if err == nil {
				p.Free()
			}
			return err
		}},
	}
}

// cancelMidWait calls call, the Context form name, with a context that it
// cancels 50 ms later, while call waits: call must return within 100 ms of
// the cancellation with an error wrapping context.Canceled.
func cancelMidWait(t *testing.T, name string, call func(c context.Context) error) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	cancelled := make(chan time.Time, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancelled <- time.Now()
		cancel()
	}()
	err := call(c)
	returned := time.Now()
	at := <-cancelled
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%s: %v, want an error wrapping context.Canceled", name, err)
	}
	if d := returned.Sub(at); d > 100*time.Millisecond {
		t.Errorf("%s returned %v after the cancellation, want at most 100ms", name, d)
	}
}

var (
	slowBuildProg = codegen.Register(&codegen.Program{
		ID:    pkg + "slowBuild",
		Image: "// fake:sleep=1s\n__kernel void k(__global int *x) {}",
		Name:  "slow_build.cl",
		Var:   codegen.ProgramVar(&slowBuildHandle),
	})
	slowBuildHandle rt.Program
	slowBuildKern   = codegen.Register(&codegen.Kernel{ID: pkg + "slowBuildK", Name: "k", Program: slowBuildProg, Params: 1})
)

// TestAcquireContext cancels the first launch of a generated kernel spec
// (EnqueueContext's codegen.AcquireContext) while its program builds, on
// the fake backend, whose build of this program takes a second: the
// launch returns within 100 ms of the cancellation with an error wrapping
// context.Canceled, the build goes on, and the next launch finds it.
func TestAcquireContext(t *testing.T) {
	ctx := openFake(t, nil)
	q := ctx.Queue()
	cancelMidWait(t, "AcquireContext", func(c context.Context) error {
		_, err := codegen.AcquireContext(c, q, slowBuildKern)
		return err
	})
	k, err := codegen.AcquireContext(context.Background(), q, slowBuildKern)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	codegen.SetBuffer(k, 0, buf)
	if err := codegen.Submit(q, k, rt.Range1(1), nil); err != nil {
		t.Fatal(err)
	}
	if n := ctx.Stats().Cache.Builds; n != 1 {
		t.Errorf("%d builds, want 1", n)
	}
}

// TestTransferErrorsNameBuffer: the error of a transfer says which buffer
// it was for, as the other errors of memory do: its size, its allocation
// site, and for a view where it lies, after the operation.
func TestTransferErrorsNameBuffer(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	plain, err := rt.NewBuffer[float32](ctx, 2048)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Free()
	sited, err := siteA.Alloc(q, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer sited.Free()
	view, err := plain.View(1024, 32) // at byte 4096: aligned for every device (NVIDIA's OpenCL asks 512)
	if err != nil {
		t.Fatal(err)
	}
	defer view.Free()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	v := make([]float32, 4)
	tests := []struct {
		name, want string
		call       func() error
	}{
		{"write", "write buffer (buffer of 8192 bytes): ", func() error { return plain.WriteContext(done, q, v) }},
		{"read", "read buffer (buffer of 8192 bytes): ", func() error { return plain.ReadContext(done, q, v) }},
		{"write to a site's", "write buffer (buffer of 128 bytes from siteA): ", func() error { return sited.WriteContext(done, q, v) }},
		{"read from a view", "read buffer (view of 128 bytes at byte 4096 of a buffer of 8192 bytes): ", func() error { return view.ReadContext(done, q, v) }},
	}
	for _, tt := range tests {
		err := tt.call()
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error wrapping context.Canceled that begins %q", tt.name, err, tt.want)
		}
	}
}
