package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/raw"
)

// The backend "fakeimages" is the fake backend with images: an OpenCL 1.2
// device, which PoCL and NVIDIA (OpenCL 3.0) cannot stand for, whose images
// are host memory in the one format R/FLOAT.
func init() { driver.Register("fakeimages", fakeImagesBackend{}) }

type fakeImagesBackend struct{ fakeBackend }

func (b fakeImagesBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.fakeBackend.NewContext(devs)
	return fakeImageContext{c.(*fakeContext)}, err
}

type fakeImageContext struct{ *fakeContext }

func (fakeImageContext) ImageFormats(driver.ImageKind, driver.MemAccess) ([]driver.ImageFormat, error) {
	return []driver.ImageFormat{{Order: "R", Type: "FLOAT"}}, nil
}

func (fakeImageContext) NewImage(d driver.ImageDesc) (driver.Buffer, error) {
	return &fakeBuffer{b: make([]byte, 4*d.Width*max(d.Height, 1))}, nil
}

func (fakeImageContext) NewSampler(driver.SamplerDesc) (driver.Sampler, error) {
	return fakeSampler{}, nil
}

type fakeSampler struct{}

func (fakeSampler) Release() error { return nil }

// TestImageFakeDevices: a read_write image parameter on an OpenCL 1.2
// device, and images on a backend or queue without them, are errors that
// say so.
func TestImageFakeDevices(t *testing.T) {
	ctx := openFakeBackend(t, "fakeimages", nil)
	prog, err := raw.Build(ctx, "rw", "__kernel void k(read_write image2d_t img, read_only image2d_t in) {}", "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("k")
	if err != nil {
		t.Fatal(err)
	}
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Free()
	err = k.SetImage(0, img, "read_write")
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), `a read_write image parameter needs an OpenCL 2.0 device or later, but fake device (fake) is "OpenCL 1.2 fake"`) {
		t.Errorf("read_write image on an OpenCL 1.2 device: %v", err)
	}
	if err := k.SetImage(1, img, "read_only"); err != nil {
		t.Errorf("read_only image on an OpenCL 1.2 device: %v", err)
	}
	if err := k.SetImage(1, img, "readonly"); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("a misspelt access qualifier: %v", err)
	}
	// The fake queue has no image commands.
	if err := img.Write(ctx.Queue(), rt.ImageRegion{}, make([]float32, 16)); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("write on a queue without image commands: %v", err)
	}
	_, err = rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.UnormInt8, Width: 4, Height: 4})
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "(it supports R/FLOAT)") {
		t.Errorf("a format the device lacks: %v", err)
	}

	plain := openFake(t, nil)
	if _, err := rt.NewImage(plain, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4}); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "the backend has no images") {
		t.Errorf("images on a backend without them: %v", err)
	}
}
