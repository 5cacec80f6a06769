package main

import (
	"errors"
	"image"
	"time"

	"github.com/dgen-go/dgen/rt"
)

// clampNearest reads pixels by integer coordinates, clamped to the edge.
var clampNearest = rt.Sampler{Address: rt.ClampToEdge, Filter: rt.Nearest}

// runImages runs the pipeline on images for o.frames frames: the input is
// written once (in place from the *image.RGBA, an RGBA/UNORM_INT8 image);
// each frame takes its intermediate and output images from allocation
// sites, runs the three kernels and gives the images back, in stream
// order. The outputs are read from the last frame; with o.bench each
// frame is timed to the end of its commands.
func runImages(ctx *rt.Context, src *image.RGBA, o options) (outputs, []time.Duration, error) {
	q := ctx.Queue()
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	in, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.UnormInt8, Width: w, Height: h, Access: rt.ReadOnly})
	if err != nil {
		return outputs{}, nil, err
	}
	defer in.Free()
	if err := in.Write(q, rt.ImageRegion{}, src); err != nil {
		return outputs{}, nil, err
	}
	rgba := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.Float, Width: w, Height: h}
	out := rgba
	out.Access = rt.WriteOnly
	r := rt.Range2(w, h)
	var got outputs
	var times []time.Duration
	for f := range o.frames {
		start := time.Now()
		blurred, err1 := blurredImages.Alloc(q, rgba)
		coarse, err2 := coarseImages.Alloc(q, out)
		detail, err3 := detailImages.Alloc(q, out)
		magDesc := out
		magDesc.Order = rt.OrderR
		mag, err4 := magImages.Alloc(q, magDesc)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return got, nil, err
		}
		err := errors.Join(
			(&Blur{In: in, S: clampNearest, Out: blurred}).Enqueue(q, r),
			(&Sobel{In: blurred, S: clampNearest, Mag: mag}).Enqueue(q, r),
			(&EAW{In: blurred, Coarse: coarse, Detail: detail, Scale: int32(o.scale), Sharpen: float32(o.sharpen)}).Enqueue(q, r))
		if err == nil {
			err = q.Finish()
		}
		times = append(times, time.Since(start))
		if err == nil && f == o.frames-1 {
			got, err = readImages(q, w, h, blurred, mag, coarse, detail)
		}
		err = errors.Join(err, blurred.Free(), mag.Free(), coarse.Free(), detail.Free())
		if err != nil {
			return got, nil, err
		}
	}
	return got, times, nil
}

func readImages(q *rt.Queue, w, h int, blurred, mag, coarse, detail rt.Image) (outputs, error) {
	got := outputs{make([]float32, 4*w*h), make([]float32, 4*w*h), make([]float32, 4*w*h), make([]float32, w*h)}
	return got, errors.Join(
		blurred.Read(q, rt.ImageRegion{}, got.blurred),
		mag.Read(q, rt.ImageRegion{}, got.mag),
		coarse.Read(q, rt.ImageRegion{}, got.coarse),
		detail.Read(q, rt.ImageRegion{}, got.detail))
}

// runBuffers is runImages on buffers.
func runBuffers(ctx *rt.Context, src *image.RGBA, o options) (outputs, []time.Duration, error) {
	q := ctx.Queue()
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	n := w * h
	in, err := rt.NewBuffer[[4]uint8](ctx, n)
	if err != nil {
		return outputs{}, nil, err
	}
	defer in.Free()
	px := make([][4]uint8, n)
	for y := range h {
		for x := range w {
			off := src.PixOffset(src.Rect.Min.X+x, src.Rect.Min.Y+y)
			copy(px[y*w+x][:], src.Pix[off:off+4])
		}
	}
	if err := in.Write(q, px); err != nil {
		return outputs{}, nil, err
	}
	W, H := int32(w), int32(h)
	r := rt.Range2(w, h)
	var got outputs
	var times []time.Duration
	for f := range o.frames {
		start := time.Now()
		blurred, err1 := blurredBufs.Alloc(q, n)
		coarse, err2 := coarseBufs.Alloc(q, n)
		detail, err3 := detailBufs.Alloc(q, n)
		mag, err4 := magBufs.Alloc(q, n)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return got, nil, err
		}
		err := errors.Join(
			(&BlurBuf{In: in, Out: blurred, W: W, H: H}).Enqueue(q, r),
			(&SobelBuf{In: blurred, Mag: mag, W: W, H: H}).Enqueue(q, r),
			(&EAWBuf{In: blurred, Coarse: coarse, Detail: detail, W: W, H: H, Scale: int32(o.scale), Sharpen: float32(o.sharpen)}).Enqueue(q, r))
		if err == nil {
			err = q.Finish()
		}
		times = append(times, time.Since(start))
		if err == nil && f == o.frames-1 {
			got, err = readBuffers(q, n, blurred, mag, coarse, detail)
		}
		err = errors.Join(err, blurred.Free(), mag.Free(), coarse.Free(), detail.Free())
		if err != nil {
			return got, nil, err
		}
	}
	return got, times, nil
}

func readBuffers(q *rt.Queue, n int, blurred rt.Buffer[[4]float32], mag rt.Buffer[float32], coarse, detail rt.Buffer[[4]float32]) (outputs, error) {
	b, c, d := make([][4]float32, n), make([][4]float32, n), make([][4]float32, n)
	got := outputs{mag: make([]float32, n)}
	err := errors.Join(blurred.Read(q, b), mag.Read(q, got.mag), coarse.Read(q, c), detail.Read(q, d))
	got.blurred, got.coarse, got.detail = flat4(b), flat4(c), flat4(d)
	return got, err
}

func flat4(v [][4]float32) []float32 {
	out := make([]float32, 0, 4*len(v))
	for _, p := range v {
		out = append(out, p[:]...)
	}
	return out
}
