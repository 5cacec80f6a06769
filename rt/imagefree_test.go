package rt_test

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
)

// The backend "fakeimagequeue" is fakeimages with queues that run image
// commands on the host memory of its images, calling fakeImageHook first:
// a test holds an image command inside the driver with it.
func init() { driver.Register("fakeimagequeue", fakeImageQueueBackend{}) }

type fakeImageQueueBackend struct{ fakeImagesBackend }

func (b fakeImageQueueBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.fakeImagesBackend.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return fakeImageQueueContext{c.(fakeImageContext)}, nil
}

type fakeImageQueueContext struct{ fakeImageContext }

func (fakeImageQueueContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return fakeImageQueue{}, nil
}

type fakeImageQueue struct{ fakeQueue }

var fakeImageHook atomic.Pointer[func()]

// imageCommand runs the hook, then counts uses of released images.
func imageCommand(imgs ...driver.Buffer) {
	if h := fakeImageHook.Load(); h != nil {
		(*h)()
	}
	for _, b := range imgs {
		b.(*fakeBuffer).checkLive()
	}
}

func (fakeImageQueue) ReadImage(img driver.Buffer, blocking bool, r driver.ImageRegion, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	imageCommand(img)
	return nil, nil
}

func (fakeImageQueue) WriteImage(img driver.Buffer, blocking bool, r driver.ImageRegion, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	imageCommand(img)
	return nil, nil
}

func (fakeImageQueue) CopyImage(src, dst driver.Buffer, so, do, size [3]int, wait []driver.Event) (driver.Event, error) {
	imageCommand(src, dst)
	return newFakeEvent(), nil
}

func (fakeImageQueue) FillImage(img driver.Buffer, color [16]byte, origin, size [3]int, wait []driver.Event) (driver.Event, error) {
	imageCommand(img)
	return newFakeEvent(), nil
}

// TestImageFreeDuringDriverCall is TestFreeDuringDriverCall for images:
// an image freed while a transfer, copy or fill of it is inside the driver
// is released only after the call returns, never under it.
func TestImageFreeDuringDriverCall(t *testing.T) {
	desc := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4}
	for _, tc := range []struct {
		name string
		call func(q *rt.Queue, img, other rt.Image) error
	}{
		{"read", func(q *rt.Queue, img, _ rt.Image) error {
			return img.Read(q, rt.ImageRegion{}, make([]float32, 16))
		}},
		{"write", func(q *rt.Queue, img, _ rt.Image) error {
			return img.Write(q, rt.ImageRegion{}, make([]float32, 16))
		}},
		{"copy", func(q *rt.Queue, img, other rt.Image) error {
			_, err := img.CopyTo(q, other, rt.ImageRegion{}, [3]int{})
			return err
		}},
		{"fill", func(q *rt.Queue, img, _ rt.Image) error {
			_, err := img.Fill(q, rt.ImageRegion{}, [4]float64{1})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openFakeBackend(t, "fakeimagequeue", nil)
			q := ctx.Queue()
			img, err := rt.NewImage(ctx, desc)
			if err != nil {
				t.Fatal(err)
			}
			other, err := rt.NewImage(ctx, desc)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Free()
			enter, leave := make(chan struct{}), make(chan struct{})
			h := func() { enter <- struct{}{}; <-leave }
			fakeImageHook.Store(&h)
			defer fakeImageHook.Store(nil)
			before := fakeStats.afterRelease.Load()
			done := make(chan error, 1)
			go func() { done <- tc.call(q, img, other) }()
			<-enter
			if err := img.Free(); err != nil {
				t.Errorf("Free during the call: %v", err)
			}
			close(leave)
			if err := <-done; err != nil {
				t.Errorf("the call: %v", err)
			}
			if n := fakeStats.afterRelease.Load() - before; n != 0 {
				t.Errorf("the driver saw %d uses of a released image", n)
			}
		})
	}
}
