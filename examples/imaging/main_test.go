package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	rtstats "github.com/dgen-go/dgen/rt/stats"
)

func testOptions() options {
	return options{w: 67, h: 45, frames: 3, scale: 1, sharpen: 20}
}

// TestRun runs both pipelines on PoCL and checks every output pixel (run
// does), then runs them again in a context of their own with the
// persistent cache: the programs, device global and all, come from disk
// and compute the same.
func TestRun(t *testing.T) {
	skipWithoutImages(t)
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	o := testOptions()
	o.out = t.TempDir()
	res, err := run(o, t.Logf)
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	if st := res["cache"].(rtstats.Cache); st.Builds != 2 || st.DiskHits != 0 {
		t.Errorf("first run: %d builds, %d disk hits, want 2 and 0", st.Builds, st.DiskHits)
	}
	for _, name := range []string{"input.png", "sobel.png"} {
		if fi, err := os.Stat(filepath.Join(o.out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	o.frames, o.out = 2, ""
	res, err = run(o, t.Logf)
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	if st := res["cache"].(rtstats.Cache); st.Builds != 0 || st.DiskHits != 2 {
		t.Errorf("second run: %d builds, %d disk hits, want 0 and 2", st.Builds, st.DiskHits)
	}
}

// TestCheckFails breaks the buffer pipeline's blur on purpose (the wrong
// scale) and expects the check to name the first pixel that differs.
func TestCheckFails(t *testing.T) {
	want := outputs{blurred: []float32{0.5, 0.5, 0.5, 1}, mag: []float32{1}, coarse: make([]float32, 4), detail: make([]float32, 4)}
	got := want
	got.blurred = []float32{0.5, 0.5, 0.5001, 1}
	err := check("buffers", got, want, 1, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "blur differs at pixel (0, 0) channel 2") {
		t.Fatalf("check of a wrong blur: %v", err)
	}
}

// TestReadWriteImage: a kernel with a read_write image parameter runs
// where the compiler has read_write images (PoCL's OpenCL C 3.0 by
// default), and where it has not (built with -cl-std=CL1.2) fails with
// dgen's message that says why, launching nothing.
func TestReadWriteImage(t *testing.T) {
	skipWithoutImages(t)
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: 4, Height: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Free()
	px := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := img.Write(q, rt.ImageRegion{}, px); err != nil {
		t.Fatal(err)
	}
	err = (&Brighten12{Img: img}).Enqueue(q, rt.Range2(4, 4))
	if !errors.Is(err, rt.ErrBuildFailed) || !strings.Contains(err.Error(), "dgen: parameter img of kernel brighten is a read_write image, which needs OpenCL C 2.0") {
		t.Fatalf("read_write image on an OpenCL C 1.2 compiler: %v", err)
	}
	switch {
	case strings.Contains(err.Error(), "<kernel>:"):
		// NVIDIA's compiler ignores #line: its log counts the lines of
		// the device image, and names no file.
		t.Logf("the compiler ignores #line; not checking the position: %v", err)
	case !strings.Contains(err.Error(), "rw.cl:3:"):
		t.Errorf("the build error does not point at the parameter, rw.cl line 3: %v", err)
	}
	if err := (&Brighten{Img: img}).Enqueue(q, rt.Range2(4, 4)); err != nil {
		if strings.Contains(err.Error(), "dgen: parameter img") {
			t.Skipf("the device's compiler has no read_write images: %v", err)
		}
		t.Fatal(err)
	}
	got := make([]float32, 16)
	if err := img.Read(q, rt.ImageRegion{}, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 2*px[i] {
			t.Fatalf("pixel %d = %v after brighten, want %v", i, v, 2*px[i])
		}
	}
}

// TestWriteOnlyToRead: a write_only image given to a kernel spec's
// read_only field is refused when the arguments are set, and nothing runs.
func TestWriteOnlyToRead(t *testing.T) {
	skipWithoutImages(t)
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.Float, Width: 8, Height: 8, Access: rt.WriteOnly}
	wo, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer wo.Free()
	d.Access = rt.ReadWrite
	out, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	err = (&Blur{In: wo, S: clampNearest, Out: out}).Enqueue(q, rt.Range2(8, 8))
	if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "a write_only image passed to a read_only parameter") {
		t.Fatalf("write_only image to read_only parameter: %v", err)
	}
	var zero rt.Image
	if err := (&Blur{In: zero, S: clampNearest, Out: out}).Enqueue(q, rt.Range2(8, 8)); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Fatalf("zero image: %v", err)
	}
}

// TestWrongKind: an image of another OpenCL C image type than the kernel
// parameter's (here a 3D image for an image2d_t) is refused when the
// arguments are set, with an error that names both, and nothing runs.
func TestWrongKind(t *testing.T) {
	skipWithoutImages(t)
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	d := rt.ImageDesc{Kind: rt.Image3D, Order: rt.OrderRGBA, Type: rt.Float, Width: 8, Height: 8, Depth: 2}
	cube, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer cube.Free()
	d.Kind, d.Depth = rt.Image2D, 0
	out, err := rt.NewImage(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	err = (&Blur{In: cube, S: clampNearest, Out: out}).Enqueue(q, rt.Range2(8, 8))
	if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "an image3d_t image passed to an image2d_t parameter") {
		t.Fatalf("3D image to image2d_t parameter: %v", err)
	}
	if err := (&Blur{In: out, S: clampNearest, Out: cube}).Enqueue(q, rt.Range2(8, 8)); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Fatalf("3D image to image2d_t output: %v", err)
	}
}

// skipWithoutImages skips a test that runs kernels on images where the
// backend asked for has none: DGEN_BACKEND=cuda (which this example does
// not import: images run on OpenCL).
func skipWithoutImages(t *testing.T) {
	if b := os.Getenv("DGEN_BACKEND"); b == "cuda" {
		t.Skipf("DGEN_BACKEND=%s: images run on the OpenCL backend", b)
	}
}
