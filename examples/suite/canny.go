package main

import (
	"errors"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// Canny is the image of canny.cl.
//
//dgen:program source=canny.cl
var Canny rt.Program

// Grey converts the W x H RGBA image to grey.
//
//dgen:kernel program=Canny name=canny_grey
type Grey struct {
	Grey rt.Buffer[float32] `dgen:"out"`
	RGBA rt.Buffer[uint32]
	W, H int32
}

// BlurX blurs In along x.
//
//dgen:kernel program=Canny name=canny_blur_x
type BlurX struct {
	Out  rt.Buffer[float32] `dgen:"out"`
	In   rt.Buffer[float32]
	W, H int32
}

// BlurY blurs In along y.
//
//dgen:kernel program=Canny name=canny_blur_y
type BlurY struct {
	Out  rt.Buffer[float32] `dgen:"out"`
	In   rt.Buffer[float32]
	W, H int32
}

// Gradient computes the squared Sobel magnitude and its direction class.
//
//dgen:kernel program=Canny name=canny_gradient
type Gradient struct {
	Mag2 rt.Buffer[float32] `dgen:"out"`
	Dir  rt.Buffer[uint8]   `dgen:"out"`
	In   rt.Buffer[float32]
	W, H int32
}

// Suppress classifies pixels as none, weak or strong edges.
//
//dgen:kernel program=Canny name=canny_suppress
type Suppress struct {
	Class       rt.Buffer[uint8] `dgen:"out"`
	Mag2        rt.Buffer[float32]
	Dir         rt.Buffer[uint8]
	W, H        int32
	Low2, High2 float32
}

// Hysteresis promotes weak pixels next to strong ones.
//
//dgen:kernel program=Canny name=canny_hysteresis
type Hysteresis struct {
	Next  rt.Buffer[uint8] `dgen:"out"`
	Class rt.Buffer[uint8]
	W, H  int32
}

// The thresholds of the gradient magnitude (grey levels 0-255), squared.
const (
	cannyLow2  = 20 * 20
	cannyHigh2 = 50 * 50
)

// canny finds the edges of a Size.N x Size.N synthetic RGBA image (shapes
// and noise, standing in for Lena): five images and one per hysteresis
// step allocated in every run.
var canny = Program{
	Name:   "canny",
	Source: "accelerate/canny/canny.fut",
	Datasets: []Dataset{
		{Name: "lena256", Futhark: 9.06, GPU: Size{N: 256}, Small: Size{N: 256}},
		{Name: "lena512", Futhark: 9.18, GPU: Size{N: 512}, Small: Size{N: 512}},
	},
	Test: Size{N: 100},
	New:  newCanny,
}

type cannyCase struct {
	e     *Env
	n     int
	rgba  []uint32
	dRGBA rt.Buffer[uint32]
	class rt.Buffer[uint8]
	steps int
}

// image draws random filled circles and rectangles of random colours, half
// of them faint, on a noisy background.
func image(n int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, 0xca2))
	img := make([]uint32, n*n)
	for i := range img {
		img[i] = r.Uint32() & 0x0f0f0f
	}
	for i := range 24 {
		col := r.Uint32() & 0xffffff
		if i%2 == 1 { // faint: weak edges that hysteresis follows
			col &= 0x3f3f3f
		}
		cx, cy, rad := r.IntN(n), r.IntN(n), 1+r.IntN(max(n/4, 1))
		circle := r.IntN(2) == 0
		for y := max(cy-rad, 0); y < min(cy+rad, n); y++ {
			for x := max(cx-rad, 0); x < min(cx+rad, n); x++ {
				if !circle || (x-cx)*(x-cx)+(y-cy)*(y-cy) < rad*rad {
					img[y*n+x] = col | r.Uint32()&0x070707
				}
			}
		}
	}
	return img
}

func newCanny(e *Env, s Size, seed uint64) (Case, error) {
	c := &cannyCase{e: e, n: s.N, rgba: image(s.N, seed)}
	var err error
	if c.dRGBA, err = upload(e, c.rgba); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *cannyCase) Run() error {
	if err := free(c.class); err != nil {
		return err
	}
	c.class = rt.Buffer[uint8]{}
	e, n := c.e, c.n
	w, h, r := int32(n), int32(n), rt.Range2(n, n)
	// Each stage allocates its output, launches, and frees its input: the
	// in-order queue runs the next stage only after this one read it.
	g := Grey{RGBA: c.dRGBA, W: w, H: h}
	if err := allocOut(e, g.AllocGrey, &g.Grey, n*n); err != nil {
		return err
	}
	if err := g.Enqueue(e.Q, r); err != nil {
		return errors.Join(err, g.Grey.Free())
	}
	bx := BlurX{In: g.Grey, W: w, H: h}
	if err := stage(e, bx.AllocOut, &bx.Out, n*n, bx.Enqueue, r, g.Grey); err != nil {
		return err
	}
	by := BlurY{In: bx.Out, W: w, H: h}
	if err := stage(e, by.AllocOut, &by.Out, n*n, by.Enqueue, r, bx.Out); err != nil {
		return err
	}
	gr := Gradient{In: by.Out, W: w, H: h}
	if err := allocOut(e, gr.AllocDir, &gr.Dir, n*n); err != nil {
		return errors.Join(err, by.Out.Free())
	}
	if err := stage(e, gr.AllocMag2, &gr.Mag2, n*n, gr.Enqueue, r, by.Out); err != nil {
		return errors.Join(err, gr.Dir.Free())
	}
	su := Suppress{Mag2: gr.Mag2, Dir: gr.Dir, W: w, H: h, Low2: cannyLow2, High2: cannyHigh2}
	err := stage(e, su.AllocClass, &su.Class, n*n, su.Enqueue, r, gr.Mag2)
	if err = errors.Join(err, gr.Dir.Free()); err != nil {
		return errors.Join(err, free(su.Class))
	}
	c.class = su.Class
	for c.steps = 0; ; c.steps++ {
		if err := Changed.Write(e.Q, 0); err != nil {
			return err
		}
		hy := Hysteresis{Class: c.class, W: w, H: h}
		err := stage(e, hy.AllocNext, &hy.Next, n*n, hy.Enqueue, r, c.class)
		c.class = hy.Next
		if err != nil {
			return err
		}
		changed, err := readFlag(e, &Changed)
		if err != nil || changed == 0 {
			return err
		}
	}
}

// stage allocates n elements for a stage's output into out, launches the
// stage over r and frees its input in (if not nil). On error out is nil.
func stage[T any](e *Env, allocField func(*rt.Queue, int) error, out *rt.Buffer[T], n int,
	enqueue func(*rt.Queue, rt.Range, ...*rt.Event) error, r rt.Range, in freer) error {
	if err := allocOut(e, allocField, out, n); err != nil {
		*out = rt.Buffer[T]{}
		return errors.Join(err, free(in))
	}
	err := errors.Join(enqueue(e.Q, r), free(in))
	if err != nil {
		err = errors.Join(err, out.Free())
		*out = rt.Buffer[T]{}
	}
	return err
}

func (c *cannyCase) Verify() error {
	got, err := download(c.e, c.class)
	if err != nil {
		return err
	}
	return equal("edge class", got, cannyRef(c.rgba, c.n))
}

func (c *cannyCase) Close() error { return free(c.dRGBA, c.class) }

// cannyRef runs canny.cl's stages on the CPU in float32 with the kernels'
// order of operations (each product rounded, as FP_CONTRACT OFF asks).
func cannyRef(rgba []uint32, n int) []uint8 {
	at := func(img []float32, x, y int) float32 { return img[min(max(y, 0), n-1)*n+min(max(x, 0), n-1)] }
	grey := make([]float32, n*n)
	for i, p := range rgba {
		r, g, b := float32(p&0xff), float32(p>>8&0xff), float32(p>>16&0xff)
		grey[i] = float32(float32(0.3)*r) + float32(float32(0.59)*g) + float32(float32(0.11)*b)
	}
	blur := func(in []float32, dx, dy int) []float32 {
		out := make([]float32, n*n)
		for y := range n {
			for x := range n {
				s := float32(0.0625 * at(in, x-2*dx, y-2*dy))
				s += float32(0.25 * at(in, x-dx, y-dy))
				s += float32(0.375 * at(in, x, y))
				s += float32(0.25 * at(in, x+dx, y+dy))
				s += float32(0.0625 * at(in, x+2*dx, y+2*dy))
				out[y*n+x] = s
			}
		}
		return out
	}
	in := blur(blur(grey, 1, 0), 0, 1)
	mag2, dir := make([]float32, n*n), make([]uint8, n*n)
	for y := range n {
		for x := range n {
			gx := (at(in, x+1, y-1) + 2*at(in, x+1, y) + at(in, x+1, y+1)) - (at(in, x-1, y-1) + 2*at(in, x-1, y) + at(in, x-1, y+1))
			gy := (at(in, x-1, y+1) + 2*at(in, x, y+1) + at(in, x+1, y+1)) - (at(in, x-1, y-1) + 2*at(in, x, y-1) + at(in, x+1, y-1))
			const t = float32(0.41421356)
			ax, ay := max(gx, -gx), max(gy, -gy)
			mag2[y*n+x] = float32(gx*gx) + float32(gy*gy)
			switch {
			case ay <= float32(t*ax):
				dir[y*n+x] = 0
			case ax <= float32(t*ay):
				dir[y*n+x] = 1
			case (gx > 0) == (gy > 0):
				dir[y*n+x] = 2
			default:
				dir[y*n+x] = 3
			}
		}
	}
	dxs, dys := [4]int{1, 0, 1, 1}, [4]int{0, 1, 1, -1}
	cls := make([]uint8, n*n)
	for y := range n {
		for x := range n {
			d := dir[y*n+x]
			m := mag2[y*n+x]
			a, b := at(mag2, x+dxs[d], y+dys[d]), at(mag2, x-dxs[d], y-dys[d])
			switch {
			case m < cannyLow2 || m < a || m < b:
			case m >= cannyHigh2:
				cls[y*n+x] = 2
			default:
				cls[y*n+x] = 1
			}
		}
	}
	for changed := true; changed; {
		changed = false
		next := make([]uint8, n*n)
		for y := range n {
			for x := range n {
				c := cls[y*n+x]
				if c == 1 {
					for j := -1; j <= 1; j++ {
						for i := -1; i <= 1; i++ {
							if cls[min(max(y+j, 0), n-1)*n+min(max(x+i, 0), n-1)] == 2 {
								c, changed = 2, true
							}
						}
					}
				}
				next[y*n+x] = c
			}
		}
		cls = next
	}
	return cls
}
