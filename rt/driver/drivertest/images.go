package drivertest

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// The image part of the suite: every backend whose context is a
// driver.ImageContext (rt/opencl, rt/cuda) creates, transfers, fills and
// copies images, and launches a kernel that samples one image with a
// sampler argument and a sampler constant and writes another.

const imageSource = `
__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void shift(__read_only image2d_t a, sampler_t s, __write_only image2d_t b) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	float4 v = read_imagef(a, s, p + (int2)(1, 0)) * 2.0f + read_imagef(a, edge, p - (int2)(1, 0));
	write_imagef(b, p, v + (float4)(get_image_width(a), get_image_height(b), 0, 0)); }
__kernel void plain(__global float *o) { o[get_global_id(0)] = 1.0f; }
`

// imageEnv is the env of the image tests, with the image calls.
type imageEnv struct {
	*env
	ic driver.ImageContext
	iq driver.ImageQueue
}

func (e imageEnv) image(w, h int, a driver.MemAccess) driver.Buffer {
	e.t.Helper()
	m, err := e.ic.NewImage(driver.ImageDesc{Kind: driver.Image2D, Format: driver.ImageFormat{Order: "RGBA", Type: "FLOAT"}, Width: w, Height: h, Access: a})
	if err != nil {
		e.t.Fatalf("NewImage: %v", err)
	}
	e.t.Cleanup(func() { m.Release() })
	return m
}

func (e imageEnv) readImage(m driver.Buffer, w, h int) []float32 {
	e.t.Helper()
	out := make([]float32, 4*w*h)
	r := driver.ImageRegion{Size: [3]int{w, h, 1}, RowPitch: int64(16 * w)}
	if _, err := e.iq.ReadImage(m, true, r, unsafe.Pointer(&out[0]), nil); err != nil {
		e.t.Fatalf("ReadImage: %v", err)
	}
	return out
}

// testImages runs the image tests where the backend has images.
func testImages(t *testing.T, e *env) {
	ic, ok := e.ctx.(driver.ImageContext)
	iq, ok2 := e.q.(driver.ImageQueue)
	if !ok || !ok2 {
		t.Skip("the backend has no images")
	}
	fs, err := ic.ImageFormats(driver.Image2D, driver.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	rgba := false
	for _, f := range fs {
		rgba = rgba || f == driver.ImageFormat{Order: "RGBA", Type: "FLOAT"}
	}
	if !rgba {
		t.Skipf("no RGBA/FLOAT images on %s", e.dev.Label())
	}
	ie := imageEnv{e, ic, iq}
	t.Run("Transfers", func(t *testing.T) { e := ie; ec := *e.env; ec.t = t; e.env = &ec; testImageTransfers(t, e) })
	t.Run("Kernel", func(t *testing.T) { e := ie; ec := *e.env; ec.t = t; e.env = &ec; testImageKernel(t, e) })
}

// testImageTransfers fills an image, writes a region of it from padded
// host rows, copies a box to another image and reads both back.
func testImageTransfers(t *testing.T, e imageEnv) {
	const w, h = 6, 4
	a, b := e.image(w, h, driver.ReadWrite), e.image(w, h, driver.ReadWrite)
	var color [16]byte
	for c, v := range []float32{0.25, 0.5, -1, 8} {
		*(*float32)(unsafe.Pointer(&color[4*c])) = v
	}
	for _, m := range []driver.Buffer{a, b} {
		ev, err := e.iq.FillImage(m, color, [3]int{}, [3]int{w, h, 1}, nil)
		if err != nil {
			t.Fatalf("FillImage: %v", err)
		}
		ev.Wait()
		ev.Release()
	}
	// A 3×2 region at (2, 1) from rows of 5 pixels.
	src := make([]float32, 4*5*2)
	for i := range src {
		src[i] = float32(100 + i)
	}
	r := driver.ImageRegion{Origin: [3]int{2, 1, 0}, Size: [3]int{3, 2, 1}, RowPitch: 16 * 5}
	if _, err := e.iq.WriteImage(a, true, r, unsafe.Pointer(&src[0]), nil); err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	want := func(x, y, c int) float32 {
		if x >= 2 && x < 5 && y >= 1 && y < 3 {
			return src[4*(5*(y-1)+x-2)+c]
		}
		return []float32{0.25, 0.5, -1, 8}[c]
	}
	check := func(name string, got []float32, want func(x, y, c int) float32) {
		for y := range h {
			for x := range w {
				for c := range 4 {
					if g := got[4*(w*y+x)+c]; g != want(x, y, c) {
						t.Errorf("%s: pixel (%d, %d) channel %d = %v, want %v", name, x, y, c, g, want(x, y, c))
						return
					}
				}
			}
		}
	}
	check("written", e.readImage(a, w, h), want)
	ev, err := e.iq.CopyImage(a, b, [3]int{2, 1, 0}, [3]int{0, 0, 0}, [3]int{3, 2, 1}, nil)
	if err != nil {
		t.Fatalf("CopyImage: %v", err)
	}
	ev.Wait()
	ev.Release()
	check("copied", e.readImage(b, w, h), func(x, y, c int) float32 {
		if x < 3 && y < 2 {
			return want(x+2, y+1, c)
		}
		return want(-1, -1, c)
	})
	if _, err := e.iq.ReadImage(a, true, driver.ImageRegion{Origin: [3]int{4, 0, 0}, Size: [3]int{3, 1, 1}}, unsafe.Pointer(&src[0]), nil); err == nil {
		t.Error("a read past the image's edge succeeded")
	}
}

// testImageKernel launches shift and checks every pixel, computed exactly
// in float.
func testImageKernel(t *testing.T, e imageEnv) {
	const w, h = 7, 3
	a, b := e.image(w, h, driver.ReadOnly), e.image(w, h, driver.WriteOnly)
	in := make([]float32, 4*w*h)
	for i := range in {
		in[i] = float32(i%97) * 0.5
	}
	if _, err := e.iq.WriteImage(a, true, driver.ImageRegion{Size: [3]int{w, h, 1}}, unsafe.Pointer(&in[0]), nil); err != nil {
		t.Fatal(err)
	}
	p, err := e.ctx.BuildProgram(imageSource, "")
	if err != nil {
		t.Fatalf("BuildProgram: %v", err)
	}
	defer p.Release()
	k, err := p.NewKernel("shift")
	if err != nil {
		t.Fatalf("NewKernel: %v", err)
	}
	defer k.Release()
	s, err := e.ic.NewSampler(driver.SamplerDesc{Address: "clamp", Filter: "nearest"})
	if err != nil {
		t.Fatalf("NewSampler: %v", err)
	}
	defer s.Release()
	sk, ok := k.(driver.SamplerKernel)
	if !ok {
		t.Fatal("the kernel takes no samplers")
	}
	if err := errors.Join(k.SetArgBuffer(0, a), sk.SetArgSampler(1, s), k.SetArgBuffer(2, b)); err != nil {
		t.Fatal(err)
	}
	e.launch(k, driver.NDRange{Dims: 2, Global: [3]int{w, h, 1}})
	got := e.readImage(b, w, h)
	px := func(x, y, c int, edge bool) float32 {
		if edge {
			x = max(x, 0)
		} else if x >= w {
			return 0 // clamp: the border colour
		}
		return in[4*(w*y+x)+c]
	}
	for y := range h {
		for x := range w {
			for c := range 4 {
				want := px(x+1, y, c, false)*2 + px(x-1, y, c, true) + []float32{w, h, 0, 0}[c]
				if g := got[4*(w*y+x)+c]; g != want && !(math.IsNaN(float64(g)) && math.IsNaN(float64(want))) {
					t.Errorf("pixel (%d, %d) channel %d = %v, want %v", x, y, c, g, want)
					return
				}
			}
		}
	}
}
