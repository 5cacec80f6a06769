package rt_test

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

var (
	imgSite  rt.ImageSite
	imgSite2 rt.ImageSite

	_ = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar((*rt.AllocSite[rt.Image])(&imgSite)), ID: "github.com/dgen-go/dgen/rt_test.imgSite", Name: "imgSite"})
	_ = codegen.Register(&codegen.AllocSite{Var: codegen.AllocSiteVar((*rt.AllocSite[rt.Image])(&imgSite2)), ID: "github.com/dgen-go/dgen/rt_test.imgSite2", Name: "imgSite2"})
)

func randBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// roundTrip writes random pixels to the whole image, reads them back, and
// reads a box with pitches that leave gaps.
func roundTrip(t *testing.T, q *rt.Queue, img rt.Image, dims [3]int, px int) {
	t.Helper()
	n := dims[0] * dims[1] * dims[2] * px
	src := randBytes(n)
	if err := img.Write(q, rt.ImageRegion{}, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := img.Read(q, rt.ImageRegion{}, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("whole image: read differs from write")
	}
	// The last pixels of each axis, into host rows of pitch row+3 pixels.
	o := [3]int{dims[0] / 2, dims[1] / 2, dims[2] / 2}
	s := [3]int{dims[0] - o[0], dims[1] - o[1], dims[2] - o[2]}
	rp := (s[0] + 3) * px
	sp := rp * (s[1] + 1)
	box := make([]byte, sp*s[2])
	if err := img.Read(q, rt.ImageRegion{Origin: o, Size: s, RowPitch: rp, SlicePitch: sp}, box); err != nil {
		t.Fatal(err)
	}
	for z := range s[2] {
		for y := range s[1] {
			want := src[(((o[2]+z)*dims[1]+o[1]+y)*dims[0]+o[0])*px:][:s[0]*px]
			if g := box[z*sp+y*rp:][:s[0]*px]; !bytes.Equal(g, want) {
				t.Fatalf("box row (y %d, z %d): %v, want %v", y, z, g, want)
			}
		}
	}
}

func TestImageRoundTrip(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	d := rt.ImageDesc{Order: rt.OrderRGBA, Type: rt.UnormInt8}
	with := func(kind rt.ImageKind, w, h, dp, l int) rt.ImageDesc {
		d := d
		d.Kind, d.Width, d.Height, d.Depth, d.Layers = kind, w, h, dp, l
		return d
	}
	buf, err := rt.NewBuffer[byte](ctx, 4*37)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	bd := with(rt.Image1DBuffer, 37, 0, 0, 0)
	bd.Buffer = buf
	tests := []struct {
		name string
		dims [3]int
		make func() (rt.Image, error)
	}{
		{"1D", [3]int{37, 1, 1}, func() (rt.Image, error) { return rt.NewImage(ctx, with(rt.Image1D, 37, 0, 0, 0)) }},
		{"1DBuffer", [3]int{37, 1, 1}, func() (rt.Image, error) { return rt.NewImage(ctx, bd) }},
		{"1DArray", [3]int{37, 5, 1}, func() (rt.Image, error) { return rt.NewImage(ctx, with(rt.Image1DArray, 37, 0, 0, 5)) }},
		{"2D", [3]int{37, 11, 1}, func() (rt.Image, error) { return rt.NewImage(ctx, with(rt.Image2D, 37, 11, 0, 0)) }},
		{"2DArray", [3]int{37, 11, 3}, func() (rt.Image, error) { return rt.NewImage(ctx, with(rt.Image2DArray, 37, 11, 0, 3)) }},
		{"3D", [3]int{37, 11, 4}, func() (rt.Image, error) { return rt.NewImage(ctx, with(rt.Image3D, 37, 11, 4, 0)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := tt.make()
			if tt.name == "1DBuffer" && errors.Is(err, errors.ErrUnsupported) && ctx.Backend() == "cuda" {
				t.Skip("rt/cuda has no image1d_buffer_t images:", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			rw := img
			roundTrip(t, q, rw, tt.dims, 4)
			if tt.name == "1DBuffer" {
				// Desc gives back the rt.Buffer that the description held.
				if b, ok := img.Desc().Buffer.(rt.Buffer[byte]); !ok || b != buf {
					t.Fatalf("Desc().Buffer = %#v, want the rt.Buffer[byte] given", img.Desc().Buffer)
				}
				// The image's pixels are the buffer's bytes.
				got := make([]byte, 4*37)
				if err := buf.Read(q, got); err != nil {
					t.Fatal(err)
				}
				if want := randBytes(4 * 37); !bytes.Equal(got, want) {
					t.Fatal("the buffer under the image holds other bytes than were written to the image")
				}
			}
			if err := rw.Free(); err != nil {
				t.Fatal(err)
			}
			if err := rw.Free(); !errors.Is(err, rt.ErrFreed) {
				t.Fatalf("second Free: %v, want ErrFreed", err)
			}
		})
	}
}

// TestImageGoTypes writes each of Go's image types into an image of its
// channel count, in place or converted, reads it back into a fresh one of
// the same type and compares every pixel.
func TestImageGoTypes(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	const w, h = 29, 13
	rect := image.Rect(5, 7, 5+w, 7+h)
	fill := func(pix []byte) []byte { copy(pix, randBytes(len(pix))); return pix }
	tests := []struct {
		name        string
		order       rt.ChannelOrder
		typ         rt.ChannelType
		src, dst    image.Image
		pix         func(image.Image) []byte
		convertsOut bool
	}{
		{"RGBA", rt.OrderRGBA, rt.UnormInt8, &image.RGBA{Pix: fill(make([]byte, 4*w*h)), Stride: 4 * w, Rect: rect}, image.NewRGBA(rect), func(m image.Image) []byte { return m.(*image.RGBA).Pix }, false},
		{"RGBAtoFloat", rt.OrderRGBA, rt.Float, &image.RGBA{Pix: fill(make([]byte, 4*w*h)), Stride: 4 * w, Rect: rect}, image.NewRGBA(rect), func(m image.Image) []byte { return m.(*image.RGBA).Pix }, true},
		{"Gray", rt.OrderR, rt.UnormInt8, &image.Gray{Pix: fill(make([]byte, w*h)), Stride: w, Rect: rect}, image.NewGray(rect), func(m image.Image) []byte { return m.(*image.Gray).Pix }, false},
		{"GrayToFloat", rt.OrderR, rt.Float, &image.Gray{Pix: fill(make([]byte, w*h)), Stride: w, Rect: rect}, image.NewGray(rect), func(m image.Image) []byte { return m.(*image.Gray).Pix }, true},
		{"GrayTo16", rt.OrderR, rt.UnormInt16, &image.Gray{Pix: fill(make([]byte, w*h)), Stride: w, Rect: rect}, image.NewGray(rect), func(m image.Image) []byte { return m.(*image.Gray).Pix }, true},
		{"Gray16", rt.OrderR, rt.UnormInt16, &image.Gray16{Pix: fill(make([]byte, 2*w*h)), Stride: 2 * w, Rect: rect}, image.NewGray16(rect), func(m image.Image) []byte { return m.(*image.Gray16).Pix }, true},
		{"Gray16ToFloat", rt.OrderR, rt.Float, &image.Gray16{Pix: fill(make([]byte, 2*w*h)), Stride: 2 * w, Rect: rect}, image.NewGray16(rect), func(m image.Image) []byte { return m.(*image.Gray16).Pix }, true},
		{"RGBA64", rt.OrderRGBA, rt.UnormInt16, &image.RGBA64{Pix: fill(make([]byte, 8*w*h)), Stride: 8 * w, Rect: rect}, image.NewRGBA64(rect), func(m image.Image) []byte { return m.(*image.RGBA64).Pix }, true},
		{"RGBA64ToFloat", rt.OrderRGBA, rt.Float, &image.RGBA64{Pix: fill(make([]byte, 8*w*h)), Stride: 8 * w, Rect: rect}, image.NewRGBA64(rect), func(m image.Image) []byte { return m.(*image.RGBA64).Pix }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: tt.order, Type: tt.typ, Width: w, Height: h})
			if err != nil {
				t.Fatal(err)
			}
			defer img.Free()
			if err := img.Write(q, rt.ImageRegion{}, tt.src); err != nil {
				t.Fatal(err)
			}
			if err := img.Read(q, rt.ImageRegion{}, tt.dst); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tt.pix(tt.dst), tt.pix(tt.src)) {
				t.Fatalf("%s through %s/%s: pixels differ", tt.name, tt.order, tt.typ)
			}
		})
	}
	// A float image holds the normalized value: 255 is 1.0, 51 is 0.2.
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 2, Height: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Free()
	if err := img.Write(q, rt.ImageRegion{}, &image.Gray{Pix: []byte{255, 51}, Stride: 2, Rect: image.Rect(0, 0, 2, 1)}); err != nil {
		t.Fatal(err)
	}
	f := make([]float32, 2)
	if err := img.Read(q, rt.ImageRegion{}, f); err != nil {
		t.Fatal(err)
	}
	if f[0] != 1 || f[1] < 0.19999 || f[1] > 0.20001 {
		t.Fatalf("R/FLOAT of gray 255, 51: %v, want 1, 0.2", f)
	}
}

func TestImageCopyFill(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.UnsignedInt32, Width: 8, Height: 4}
	a, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	d3 := d
	d3.Kind, d3.Depth = rt.Image3D, 2
	b, err := rt.NewImage(ctx, d3)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if _, err := a.Fill(q, rt.ImageRegion{}, [4]float64{7}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Fill(q, rt.ImageRegion{Origin: [3]int{2, 1, 0}, Size: [3]int{3, 2, 1}}, [4]float64{9}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fill(q, rt.ImageRegion{}, [4]float64{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CopyTo(q, b, rt.ImageRegion{}, [3]int{0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 8*4*2)
	if err := b.Read(q, rt.ImageRegion{}, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		x, y, z := i%8, i/8%4, i/32
		want := uint32(1)
		if z == 1 {
			want = 7
			if x >= 2 && x < 5 && y >= 1 && y < 3 {
				want = 9
			}
		}
		if v != want {
			t.Fatalf("pixel (%d, %d, %d) = %d, want %d", x, y, z, v, want)
		}
	}
}

const imageKernelsSrc = `
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

// out(x, y) = in(x-1, y) + in(x+1, y), clamped at the edges, through the
// sampler s; then in(x, y) through the constant sampler.
__kernel void neighbours(__read_only image2d_t in, sampler_t s, __write_only image2d_t out) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	float4 v = read_imagef(in, s, p + (int2)(-1, 0)) + read_imagef(in, s, p + (int2)(1, 0));
	write_imagef(out, p, v + read_imagef(in, nearest, p));
}
`

func TestImageKernel(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	prog, err := raw.Build(ctx, "images", imageKernelsSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("neighbours")
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 16, 3
	in, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h, Access: rt.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	out, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h, Access: rt.WriteOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	src := make([]float32, w*h)
	for i := range src {
		src[i] = float32(i * i % 17)
	}
	if err := in.Write(q, rt.ImageRegion{}, src); err != nil {
		t.Fatal(err)
	}
	for i, err := range []error{k.SetImage(0, in, "read_only"), k.SetSampler(1, rt.Sampler{}), k.SetImage(2, out, "write_only")} {
		if err != nil {
			t.Fatalf("argument %d: %v", i, err)
		}
	}
	if err := raw.Submit(q, k, rt.Range2(w, h)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, w*h)
	if err := out.Read(q, rt.ImageRegion{}, got); err != nil {
		t.Fatal(err)
	}
	for y := range h {
		for x := range w {
			at := func(x int) float32 { return src[y*w+min(max(x, 0), w-1)] }
			if want := at(x-1) + at(x+1) + at(x); got[y*w+x] != want {
				t.Fatalf("(%d, %d) = %v, want %v", x, y, got[y*w+x], want)
			}
		}
	}

	// Bad arguments: each an error, the kernel's arguments unchanged.
	other := openCPU(t)
	foreign, err := rt.NewImage(other, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Free()
	freed, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	freed.Free()
	for _, tt := range []struct {
		name string
		err  error
		want error
		msg  string
	}{
		{"WriteOnlyToRead", k.SetImage(0, out, "read_only"), rt.ErrInvalidArgument, "a write_only image passed to a read_only parameter"},
		{"ReadOnlyToWrite", k.SetImage(2, in, "write_only"), rt.ErrInvalidArgument, "a read_only image passed to a write_only parameter"},
		{"OtherContext", k.SetImage(0, foreign, "read_only"), rt.ErrInvalidArgument, "belongs to the context"},
		{"Freed", k.SetImage(0, freed, "read_only"), rt.ErrFreed, "freed"},
		{"Zero", k.SetImage(0, rt.Image{}, "read_only"), rt.ErrInvalidArgument, "zero image"},
		{"RepeatUnnormalized", k.SetSampler(1, rt.Sampler{Address: rt.Repeat}), rt.ErrInvalidArgument, "needs normalized coordinates"},
		{"BadFilter", k.SetSampler(1, rt.Sampler{Filter: 7}), rt.ErrInvalidArgument, `filter "FilterMode(7)": want one of nearest, linear`},
	} {
		if !errors.Is(tt.err, tt.want) || !strings.Contains(tt.err.Error(), tt.msg) {
			t.Errorf("%s: %v, want an error wrapping %v that says %q", tt.name, tt.err, tt.want, tt.msg)
		}
	}
	if err := raw.Submit(q, k, rt.Range2(w, h)); err != nil {
		t.Fatal(err)
	}
	again := make([]float32, w*h)
	if err := out.Read(q, rt.ImageRegion{}, again); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again, got) {
		t.Fatal("after the refused arguments the kernel computed something else")
	}
}

// TestImageBadInput: each bad input is an error that says what is wrong,
// and the image keeps its pixels.
func TestImageBadInput(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	other := openCPU(t)
	const w, h = 8, 4
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.UnsignedInt8, Width: w, Height: h}
	img, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Free()
	orig := randBytes(w * h)
	if err := img.Write(q, rt.ImageRegion{}, orig); err != nil {
		t.Fatal(err)
	}
	freed, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	freed.Free()
	ones := bytes.Repeat([]byte{1}, 4*w*h)
	_, lacking := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGB, Type: rt.Float, Width: w, Height: h})
	_, badSize := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h, Depth: 3})
	_, badOrder := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: 99, Type: rt.Float, Width: w, Height: h})
	_, noKind := rt.NewImage(ctx, rt.ImageDesc{Order: rt.OrderR, Type: rt.Float, Width: w, Height: h})
	_, badKind := imgSite.Alloc(q, rt.ImageDesc{Kind: 42, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h})
	pooled, err := rt.Alloc[byte](q, 4*w)
	if err != nil {
		t.Fatal(err)
	}
	_, pooledUnder := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image1DBuffer, Order: rt.OrderR, Type: rt.UnsignedInt8, Width: w, Buffer: pooled})
	small, err := rt.NewBuffer[byte](ctx, w-1)
	if err != nil {
		t.Fatal(err)
	}
	_, smallUnder := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image1DBuffer, Order: rt.OrderR, Type: rt.UnsignedInt8, Width: w, Buffer: small})
	under, err := rt.NewBuffer[byte](ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	over, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image1DBuffer, Order: rt.OrderR, Type: rt.UnsignedInt8, Width: w, Buffer: under})
	no1DBuffer := errors.Is(err, errors.ErrUnsupported) && ctx.Backend() == "cuda" // rt/cuda has none
	if err != nil && !no1DBuffer {
		t.Fatal(err)
	}
	defer pooled.Free()
	defer small.Free()
	under.Free()
	var overFreed error
	if !no1DBuffer {
		defer over.Free()
		overFreed = over.Write(q, rt.ImageRegion{}, ones)
	}
	_, badCopy := img.CopyTo(q, rt.Image{}, rt.ImageRegion{}, [3]int{})
	_, fillOut := img.Fill(q, rt.ImageRegion{Origin: [3]int{w, 0, 0}, Size: [3]int{1, 1, 1}}, [4]float64{1})
	tests := []struct {
		name string
		err  error
		want error
		msg  string
	}{
		{"FormatLacking", lacking, errors.ErrUnsupported, "R/UNORM_INT8"},
		{"SizeNotOfKind", badSize, rt.ErrInvalidArgument, "image2d_t has no Depth"},
		{"UnknownOrder", badOrder, rt.ErrInvalidArgument, `channel order "ChannelOrder(99)": want one of R, A, RG,`},
		{"NoKind", noKind, rt.ErrInvalidArgument, `create image: invalid argument: image kind "ImageKind(0)": want one of image1d_t,`},
		{"UnknownKind", badKind, rt.ErrInvalidArgument, `image kind "ImageKind(42)": want`},
		{"RegionOutside", img.Write(q, rt.ImageRegion{Origin: [3]int{6, 0, 0}, Size: [3]int{3, 1, 1}}, ones), rt.ErrOutOfRange, "box 3×1×1 at (6, 0, 0)"},
		{"RegionNegative", img.Write(q, rt.ImageRegion{Origin: [3]int{-1, 0, 0}, Size: [3]int{1, 1, 1}}, ones), rt.ErrOutOfRange, "box"},
		{"PitchBelowRow", img.Write(q, rt.ImageRegion{RowPitch: w - 1}, ones), rt.ErrInvalidArgument, "row pitch 7 is smaller than a row of 8 pixels"},
		{"SlicePitchBelowRows", img.Write(q, rt.ImageRegion{SlicePitch: w}, ones), rt.ErrInvalidArgument, "slice pitch 8 is smaller than 4 rows"},
		{"HostTooShort", img.Write(q, rt.ImageRegion{}, ones[:w*h-1]), rt.ErrOutOfRange, "the host memory has 31 bytes"},
		{"NotPixels", img.Write(q, rt.ImageRegion{}, "pixels"), rt.ErrInvalidArgument, "want a slice of plain data"},
		{"GoImageChannels", img.Write(q, rt.ImageRegion{}, image.NewRGBA(image.Rect(0, 0, w, h))), rt.ErrInvalidArgument, "4 channels"},
		{"OtherContext", img.Write(other.Queue(), rt.ImageRegion{}, ones), rt.ErrInvalidArgument, "belongs to the context"},
		{"Freed", freed.Write(q, rt.ImageRegion{}, ones), rt.ErrFreed, "freed"},
		{"FreedRead", freed.Read(q, rt.ImageRegion{}, ones), rt.ErrFreed, "freed"},
		{"CopyToZero", badCopy, rt.ErrInvalidArgument, "zero destination image"},
		{"FillOutside", fillOut, rt.ErrOutOfRange, "box"},
		{"NilQueue", img.Write(nil, rt.ImageRegion{}, ones), rt.ErrInvalidArgument, "nil queue"},
		{"OverPooledBuffer", pooledUnder, rt.ErrInvalidArgument, "not from an allocator"},
		{"OverSmallBuffer", smallUnder, rt.ErrOutOfRange, "the buffer has 7 bytes, the image needs 8"},
		{"BufferFreed", overFreed, rt.ErrFreed, "freed"},
	}
	for _, tt := range tests {
		if no1DBuffer && tt.name == "BufferFreed" {
			continue
		}
		if !errors.Is(tt.err, tt.want) || !strings.Contains(tt.err.Error(), tt.msg) {
			t.Errorf("%s: %v, want an error wrapping %v that says %q", tt.name, tt.err, tt.want, tt.msg)
		}
	}
	got := make([]byte, w*h)
	if err := img.Read(q, rt.ImageRegion{}, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, orig) {
		t.Fatal("a refused operation changed the image")
	}
}

// TestImageAllocSite: an image freed to its site's free list is reused by
// the next request of the same tag and shape, and only by that.
func TestImageAllocSite(t *testing.T) {
	ctx := openImages(t)
	q := ctx.Queue()
	q2, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.UnormInt8, Width: 16, Height: 8}
	a, err := imgSite.Alloc(q, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Fill(q, rt.ImageRegion{}, [4]float64{1, 0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	created := ctx.Stats().Alloc.DriverAllocs
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	// Same tag and shape, on another queue: reused, after the fill.
	b, err := imgSite.Alloc(q2, d)
	if err != nil {
		t.Fatal(err)
	}
	if n := ctx.Stats().Alloc.DriverAllocs; n != created {
		t.Fatalf("reuse created %d driver objects", n-created)
	}
	px := make([]byte, 4*16*8)
	if err := b.Read(q2, rt.ImageRegion{}, px); err != nil {
		t.Fatal(err)
	}
	if px[0] != 255 || px[1] != 0 || px[3] != 255 {
		t.Fatalf("reused image: first pixel %v, want the fill's 255 0 0 255", px[:4])
	}
	if err := a.Write(q, rt.ImageRegion{}, px); !errors.Is(err, rt.ErrFreed) {
		t.Fatalf("write to the freed handle of a reused image: %v, want ErrFreed", err)
	}
	// Another shape, another tag: each a new image.
	d2 := d
	d2.Height = 9
	c, err := imgSite.Alloc(q, d2)
	if err != nil {
		t.Fatal(err)
	}
	b.Free()
	e, err := imgSite2.Alloc(q, d)
	if err != nil {
		t.Fatal(err)
	}
	if n := ctx.Stats().Alloc.DriverAllocs; n != created+2 {
		t.Fatalf("%d driver objects for another shape and another tag, want 2", n-created)
	}
	c.Free()
	e.Free()
	// The statistics count the site's images: three requests, one reuse,
	// two images created for it (the first, and the other shape).
	st := ctx.Stats().Alloc.Tag(tagOf(t, (*rt.AllocSite[rt.Image])(&imgSite)))
	if st.Requests != 3 || st.Reuses != 1 || st.DriverAllocs != 2 || st.InUse != 0 || st.Held != 4*16*8+4*16*9 {
		t.Errorf("statistics of imgSite: %+v", st)
	}
	var unregistered rt.ImageSite
	if _, err := unregistered.Alloc(q, d); !errors.Is(err, rt.ErrNotGenerated) {
		t.Fatalf("unregistered site: %v, want ErrNotGenerated", err)
	}
	live, err := imgSite.Alloc(q, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := live.Write(q, rt.ImageRegion{}, px); !errors.Is(err, rt.ErrClosed) {
		t.Fatalf("image of a closed context: %v, want ErrClosed", err)
	}
}

// TestImageTrace: image commands are tasks at their call's line, and
// images are memory events.
func TestImageTrace(t *testing.T) {
	ctx, rec := openTraced(t)
	skipWithoutImages(t, ctx)
	q := ctx.Queue()
	rec.Reset()
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4})
	if err != nil {
		t.Fatal(err)
	}
	other, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4})
	if err != nil {
		t.Fatal(err)
	}
	px := make([]float32, 16)
	lines := map[string]int{}
	lines["write image2d_t"] = line() + 1
	if err := img.Write(q, rt.ImageRegion{}, px); err != nil {
		t.Fatal(err)
	}
	lines["read image2d_t"] = line() + 1
	if err := img.Read(q, rt.ImageRegion{}, px); err != nil {
		t.Fatal(err)
	}
	lines["fill image2d_t"] = line() + 1
	if _, err := img.Fill(q, rt.ImageRegion{}, [4]float64{}); err != nil {
		t.Fatal(err)
	}
	lines["copy image2d_t"] = line() + 1
	if _, err := img.CopyTo(q, other, rt.ImageRegion{}, [3]int{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	img.Free()
	other.Free()
	allocs, releases := 0, 0
	for _, e := range rec.Events() {
		switch e.Kind {
		case trace.NodeCreate:
			n := e.Node
			want, ok := lines[n.Name]
			if !ok || filepath.Base(n.File) != "image_test.go" || n.Line != want {
				t.Errorf("node %q at %s:%d, want one of %v in image_test.go", n.Name, n.File, n.Line, lines)
			}
			delete(lines, n.Name)
		case trace.MemAlloc:
			if e.Mem.Size == 64 {
				allocs++
			}
		case trace.MemRelease:
			if e.Mem.Size == 64 {
				releases++
			}
		}
	}
	if len(lines) != 0 {
		t.Errorf("no node for %v", lines)
	}
	if allocs != 2 || releases != 2 {
		t.Errorf("%d allocations and %d releases of 64 bytes, want 2 and 2", allocs, releases)
	}
}

// TestImageConcurrent allocates, fills, reads and frees images of one site
// from several goroutines, each on a queue of its own, while others make
// samplers; with -race.
func TestImageConcurrent(t *testing.T) {
	ctx := openImages(t)
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.UnsignedInt32, Width: 16, Height: 4}
	prog, err := raw.Build(ctx, "images", imageKernelsSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 4 {
		k, err := prog.Kernel("neighbours")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				s := rt.Sampler{Normalized: i%2 == 1, Address: []rt.AddressMode{rt.Clamp, rt.Repeat}[i%2*(1-g%2)], Filter: []rt.FilterMode{rt.Nearest, rt.Linear}[g%2]}
				if err := k.SetSampler(1, s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for g := range 4 {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			px := make([]uint32, 16*4)
			for i := range 20 {
				img, err := imgSite.Alloc(q, d)
				if err != nil {
					errs <- err
					return
				}
				v := uint32(g*100 + i)
				if _, err := img.Fill(q, rt.ImageRegion{}, [4]float64{float64(v)}); err != nil {
					errs <- err
					return
				}
				if err := img.Read(q, rt.ImageRegion{}, px); err != nil {
					errs <- err
					return
				}
				if px[0] != v || px[len(px)-1] != v {
					errs <- fmt.Errorf("goroutine %d: read %d, %d after filling %d", g, px[0], px[len(px)-1], v)
					return
				}
				if err := img.Free(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// openImages is openCPU for a test of images: it skips the test on a
// backend that has none (rt/cuda).
func openImages(t *testing.T) *rt.Context {
	ctx := openCPU(t)
	skipWithoutImages(t, ctx)
	return ctx
}

// skipWithoutImages skips the test if ctx's backend has no images.
func skipWithoutImages(t *testing.T, ctx *rt.Context) {
	t.Helper()
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 1, Height: 1})
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%s: %v", ctx.Devices()[0].Platform, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	img.Free()
}
