package rt_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
)

// TestFreeDuringCommandKeepsUse: a Free of allocator memory while a
// command that uses it on queue A is inside the driver leaves the release
// to the command's return; the block's last uses must then include the
// command, so that its reuse on queue B is ordered after it
// (Device.Order), not handed out as if A never used it.
func TestFreeDuringCommandKeepsUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook *atomic.Pointer[func(size int64)] // the fake driver's hook that holds the command
		call func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error
	}{
		{"fill", &fakeFillHook, func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error { return b.Fill(q, 7) }},
		{"copy from", &fakeCopyHook, func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error {
			dst, err := rt.NewBuffer[int32](ctx, b.Len())
			if err != nil {
				return err
			}
			defer dst.Free()
			return b.CopyTo(q, dst)
		}},
		{"copy to", &fakeCopyHook, func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error {
			src, err := rt.NewBuffer[int32](ctx, b.Len())
			if err != nil {
				return err
			}
			defer src.Free()
			return src.CopyTo(q, b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openFake(t, nil)
			qa := ctx.Queue()
			qb, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				t.Fatal(err)
			}
			defer qb.Release()
			const n = 256
			call := tc.call
			b, err := rt.Alloc[int32](qa, n)
			if err != nil {
				t.Fatal(err)
			}
			block := memOf(b).BlockID()
			enter, leave := make(chan struct{}), make(chan struct{})
			hold := func(int64) { enter <- struct{}{}; <-leave }
			tc.hook.Store(&hold)
			defer tc.hook.Store(nil)
			done := make(chan error, 1)
			go func() { done <- call(ctx, qa, b) }()
			<-enter
			if err := b.Free(); err != nil {
				t.Fatalf("Free during the command: %v", err)
			}
			tc.hook.Store(nil)
			close(leave)
			if err := <-done; err != nil {
				t.Fatalf("the command: %v", err)
			}
			before := ctx.Stats().Alloc.Total().Ordered
			re, err := rt.Alloc[int32](qb, n)
			if err != nil {
				t.Fatal(err)
			}
			defer re.Free()
			if memOf(re).BlockID() != block {
				t.Fatal("the block was not reused")
			}
			if got := ctx.Stats().Alloc.Total().Ordered - before; got != 1 {
				t.Errorf("reuse on queue B of a block that a %s on queue A used, freed during it: %d ordered reuses; want 1", tc.name, got)
			}
		})
	}
}

// The backend "fakeimageq" is "fakeimages" whose queues have image
// commands, each of which first calls fakeImageHook, if set: a test holds
// an image command inside the driver with it.
func init() { driver.Register("fakeimageq", fakeImageQBackend{}) }

var fakeImageHook atomic.Pointer[func()]

type fakeImageQBackend struct{ fakeImagesBackend }

func (b fakeImageQBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.fakeImagesBackend.NewContext(devs)
	return fakeImageQContext{c.(fakeImageContext)}, err
}

type fakeImageQContext struct{ fakeImageContext }

func (fakeImageQContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return fakeImageQueue{}, nil
}

type fakeImageQueue struct{ fakeQueue }

// imageCommand runs the hook, then counts a use of a released image.
func (fakeImageQueue) imageCommand(imgs ...driver.Buffer) {
	if h := fakeImageHook.Load(); h != nil {
		(*h)()
	}
	for _, b := range imgs {
		b.(*fakeBuffer).checkLive()
	}
}

func (q fakeImageQueue) ReadImage(img driver.Buffer, blocking bool, r driver.ImageRegion, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	q.imageCommand(img)
	if blocking {
		return nil, nil
	}
	return newFakeEvent(), nil
}

func (q fakeImageQueue) WriteImage(img driver.Buffer, blocking bool, r driver.ImageRegion, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	q.imageCommand(img)
	if blocking {
		return nil, nil
	}
	return newFakeEvent(), nil
}

func (q fakeImageQueue) CopyImage(src, dst driver.Buffer, srcOrigin, dstOrigin, size [3]int, wait []driver.Event) (driver.Event, error) {
	q.imageCommand(src, dst)
	return newFakeEvent(), nil
}

func (q fakeImageQueue) FillImage(img driver.Buffer, color [16]byte, origin, size [3]int, wait []driver.Event) (driver.Event, error) {
	q.imageCommand(img)
	return newFakeEvent(), nil
}

// TestFreeImageDuringCommand frees an image while a command on it is
// inside the driver (held there by fakeImageHook): Free returns, and the
// image is released only after the command returns, never under it, as
// for buffers (TestFreeDuringDriverCall).
func TestFreeImageDuringCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(q *rt.Queue, img, other rt.Image) (*rt.Event, error)
	}{
		{"read", func(q *rt.Queue, img, _ rt.Image) (*rt.Event, error) {
			return nil, img.Read(q, rt.ImageRegion{}, make([]float32, 16))
		}},
		{"write", func(q *rt.Queue, img, _ rt.Image) (*rt.Event, error) {
			return nil, img.Write(q, rt.ImageRegion{}, make([]float32, 16))
		}},
		{"copy", func(q *rt.Queue, img, other rt.Image) (*rt.Event, error) {
			return img.CopyTo(q, other, rt.ImageRegion{}, [3]int{})
		}},
		{"fill", func(q *rt.Queue, img, _ rt.Image) (*rt.Event, error) {
			return img.Fill(q, rt.ImageRegion{}, [4]float64{1})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openFakeBackend(t, "fakeimageq", nil)
			q := ctx.Queue()
			desc := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4}
			img, err := rt.NewImage(ctx, desc)
			if err != nil {
				t.Fatal(err)
			}
			other, err := rt.NewImage(ctx, desc) // CopyTo's destination
			if err != nil {
				t.Fatal(err)
			}
			defer other.Free()
			used, err, freeErr := freeInImageCall(func() error {
				ev, err := tc.call(q, img, other)
				ev.Release()
				return err
			}, img.Free)
			if freeErr != nil {
				t.Errorf("Free during the command: %v", freeErr)
			}
			if err != nil {
				t.Errorf("the command: %v", err)
			}
			if used != 0 {
				t.Errorf("the driver saw %d uses of a released image", used)
			}
		})
	}
}

// NewImage runs fakeImageHook, then counts a use of a released buffer
// that the image lies over.
func (c fakeImageQContext) NewImage(d driver.ImageDesc) (driver.Buffer, error) {
	if h := fakeImageHook.Load(); h != nil {
		(*h)()
	}
	if d.Buffer != nil {
		d.Buffer.(*fakeBuffer).checkLive()
	}
	return c.fakeImageContext.NewImage(d)
}

// TestFreeBufferDuringNewImage frees a buffer while NewImage makes an
// image1d_buffer_t over it inside the driver: the buffer is released only
// once the driver has returned, never under the call.
func TestFreeBufferDuringNewImage(t *testing.T) {
	ctx := openFakeBackend(t, "fakeimageq", nil)
	under, err := rt.NewBuffer[float32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	used, err, freeErr := freeInImageCall(func() error {
		img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image1DBuffer, Order: rt.OrderR, Type: rt.Float, Width: 16, Buffer: under})
		if err == nil {
			img.Free()
		}
		return err
	}, under.Free)
	if freeErr != nil {
		t.Errorf("Free during NewImage: %v", freeErr)
	}
	if err != nil && !errors.Is(err, rt.ErrFreed) {
		t.Errorf("NewImage: %v; want nil or ErrFreed", err)
	}
	if used != 0 {
		t.Errorf("the driver saw %d uses of a released buffer", used)
	}
}

// freeInImageCall runs call, which makes one image call of the driver
// ("fakeimageq"), holds it inside the driver while free runs, and then lets
// it go. It returns how many uses of released memory the driver saw
// meanwhile, call's error and free's.
func freeInImageCall(call, free func() error) (used int64, err, freeErr error) {
	enter, leave := make(chan struct{}), make(chan struct{})
	h := func() { enter <- struct{}{}; <-leave }
	fakeImageHook.Store(&h)
	defer fakeImageHook.Store(nil)
	before := fakeStats.afterRelease.Load()
	done := make(chan error, 1)
	go func() { done <- call() }()
	<-enter
	freeErr = free()
	fakeImageHook.Store(nil)
	close(leave)
	err = <-done
	return fakeStats.afterRelease.Load() - before, err, freeErr
}

// TestNewBufferContextWaitsForHeld: NewBufferContext waiting past
// Config.MemoryLimit is ended by a Free of an allocator's buffer, whose
// block goes to a free list where NewBuffer, which asks the driver,
// cannot reuse it: the wait must return held blocks again and succeed,
// not wait until its ctx is done while the budget is held in free lists.
func TestNewBufferContextWaitsForHeld(t *testing.T) {
	const limit = 1 << 20
	ctx := openCPUConfig(t, rt.Config{MemoryLimit: limit})
	q := ctx.Queue()
	held, err := rt.Alloc[byte](q, limit/2)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b, err := rt.NewBufferContext[byte](wctx, ctx, 3*limit/4)
		if err == nil {
			b.Free()
		}
		done <- err
	}()
	for budgetOf(ctx).Waits == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := held.Free(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("NewBufferContext after the budget's memory went to a free list: %v", err)
	}
}
