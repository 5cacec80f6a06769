package opencl

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// cpuContext opens a context on the first CPU device (PoCL).
func cpuContext(t *testing.T) *context {
	t.Helper()
	ps, err := Backend{}.Platforms()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		for _, d := range p.Devices {
			if d.Type == driver.DeviceCPU {
				c, err := Backend{}.NewContext([]driver.DeviceInfo{d})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Release() })
				return c.(*context)
			}
		}
	}
	t.Skip("no CPU device")
	return nil
}

// TestImageBinding lists formats by name, makes an image and a sampler,
// moves a box of pixels through it, and turns names OpenCL has no code for
// into CL_INVALID_* errors.
func TestImageBinding(t *testing.T) {
	c := cpuContext(t)
	fs, err := c.ImageFormats(driver.Image2D, driver.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(fs, driver.ImageFormat{Order: "RGBA", Type: "UNORM_INT8"}) {
		t.Fatalf("formats %v lack RGBA/UNORM_INT8, which every image device has", fs)
	}
	for _, f := range fs {
		if strings.HasPrefix(f.Order, "0x") || strings.HasPrefix(f.Type, "0x") {
			t.Errorf("format %v has a code without a name", f)
		}
	}
	img, err := c.NewImage(driver.ImageDesc{Kind: driver.Image2D, Format: driver.ImageFormat{Order: "R", Type: "UNSIGNED_INT8"}, Width: 4, Height: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Release()
	dq, err := c.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dq.Release()
	q := dq.(queue)
	src := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if _, err := q.WriteImage(img, true, driver.ImageRegion{Size: [3]int{4, 3, 1}, RowPitch: 4}, unsafe.Pointer(&src[0]), nil); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2*2)
	if _, err := q.ReadImage(img, true, driver.ImageRegion{Origin: [3]int{1, 1, 0}, Size: [3]int{2, 2, 1}, RowPitch: 2}, unsafe.Pointer(&got[0]), nil); err != nil {
		t.Fatal(err)
	}
	if want := []byte{6, 7, 10, 11}; !slices.Equal(got, want) {
		t.Fatalf("box (1, 1) 2x2: %v, want %v", got, want)
	}
	s, err := c.NewSampler(driver.SamplerDesc{Normalized: true, Address: "repeat", Filter: "linear"})
	if err != nil {
		t.Fatal(err)
	}
	s.Release()
	if _, err := c.ImageFormats(driver.ImageKind(9), driver.ReadOnly); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "clGetSupportedImageFormats: unsupported operation: image kind ImageKind(9)") {
		t.Errorf("an unknown kind: %v", err)
	}
	for _, tt := range []struct {
		name string
		err  error
		code string
	}{
		{"order", func() error {
			_, err := c.NewImage(driver.ImageDesc{Kind: driver.Image2D, Format: driver.ImageFormat{Order: "RGBZ", Type: "FLOAT"}, Width: 1, Height: 1})
			return err
		}(), "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"},
		{"sampler", func() error {
			_, err := c.NewSampler(driver.SamplerDesc{Address: "wrap", Filter: "nearest"})
			return err
		}(), "CL_INVALID_VALUE"},
	} {
		var de *driver.Error
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.code) || !errors.As(tt.err, &de) {
			t.Errorf("%s: %v, want %s", tt.name, tt.err, tt.code)
		}
	}
}
