package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends" // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
)

// The tolerances of the check, absolute, on values in [0, 1] (the Sobel
// magnitude reaches about 5.7): the device may contract a*b+c into one
// fused operation and compute exp and sqrt within a few ulp of Go's.
const (
	tolBlur  = 1e-5
	tolSobel = 1e-4
	tolEAW   = 1e-4
)

type options struct {
	w, h    int
	in, out string
	frames  int // frames of each pipeline; with bench, each timed
	bench   bool
	scale   int
	sharpen float64
}

func main() {
	var o options
	jsonOut := flag.Bool("json", false, "print one JSON object, with an \"ok\" field, last")
	size := flag.String("size", "256x192", "width x height of the generated input")
	flag.StringVar(&o.in, "in", "", "a PNG to process instead of the generated one")
	flag.StringVar(&o.out, "out", "", "a directory to write the input and the outputs to as PNG")
	flag.IntVar(&o.frames, "frames", 3, "frames of each pipeline (reusing the allocation sites' images and buffers)")
	flag.BoolVar(&o.bench, "bench", false, "time every frame but the first (which builds the programs) of the two pipelines: median, min and max")
	flag.IntVar(&o.scale, "scale", 1, "the wavelet step's scale: taps 2^scale pixels apart")
	flag.Float64Var(&o.sharpen, "sharpen", 20, "the wavelet step's edge sensitivity")
	flag.Parse()
	if _, err := fmt.Sscanf(*size, "%dx%d", &o.w, &o.h); err != nil || o.w <= 0 || o.h <= 0 {
		fmt.Fprintf(os.Stderr, "imaging: -size %q: want WIDTHxHEIGHT\n", *size)
		os.Exit(2)
	}
	logf := func(format string, args ...any) {
		if !*jsonOut {
			fmt.Printf(format+"\n", args...)
		}
	}
	res, err := run(o, logf)
	if res == nil {
		res = map[string]any{}
	}
	res["ok"] = err == nil
	if err != nil {
		res["error"] = err.Error()
	}
	if *jsonOut {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imaging:", err)
		os.Exit(1)
	}
}

// input returns the image to process: the PNG o.in, or a generated one
// (gradients, discs and noise) encoded as PNG and decoded again.
func input(o options) (*image.RGBA, []byte, error) {
	var data []byte
	if o.in != "" {
		b, err := os.ReadFile(o.in)
		if err != nil {
			return nil, nil, err
		}
		data = b
	} else {
		var buf bytes.Buffer
		if err := png.Encode(&buf, generate(o.w, o.h)); err != nil {
			return nil, nil, fmt.Errorf("encode the generated input: %w", err)
		}
		data = buf.Bytes()
	}
	m, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("decode input: %w", err)
	}
	rgba, ok := m.(*image.RGBA)
	if !ok {
		rgba = image.NewRGBA(m.Bounds())
		draw.Draw(rgba, rgba.Bounds(), m, m.Bounds().Min, draw.Src)
	}
	return rgba, data, nil
}

// generate draws a test picture: colour gradients, hard-edged discs (for
// the edge detector and the edge-avoiding step) and a little noise.
func generate(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	type disc struct {
		x, y, r float64
		c       [3]float64
	}
	var discs []disc
	for range 6 {
		discs = append(discs, disc{r.Float64() * float64(w), r.Float64() * float64(h), (0.05 + 0.15*r.Float64()) * float64(min(w, h)),
			[3]float64{r.Float64(), r.Float64(), r.Float64()}})
	}
	for y := range h {
		for x := range w {
			c := [3]float64{float64(x) / float64(w), float64(y) / float64(h), 0.5 + 0.5*math.Sin(float64(x+y)/17)}
			for _, d := range discs {
				if math.Hypot(float64(x)-d.x, float64(y)-d.y) < d.r {
					c = d.c
				}
			}
			var px [3]uint8
			for i := range 3 {
				px[i] = uint8(min(max(c[i]*255+r.NormFloat64()*4, 0), 255))
			}
			m.SetRGBA(x, y, color.RGBA{px[0], px[1], px[2], 255})
		}
	}
	return m
}

// outputs are what a pipeline computed, as planes and slices to check.
type outputs struct {
	blurred, coarse, detail []float32 // four channels a pixel
	mag                     []float32
}

// digest is a hash of every output value's bits, to compare the outputs
// of two backends bit for bit (the -json output's "images_digest").
func (o outputs) digest() string {
	h := fnv.New64a()
	for _, s := range [][]float32{o.blurred, o.mag, o.coarse, o.detail} {
		for _, v := range s {
			binary.Write(h, binary.LittleEndian, math.Float32bits(v))
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func run(o options, logf func(string, ...any)) (map[string]any, error) {
	src, pngData, err := input(o)
	if err != nil {
		return nil, err
	}
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	ctx, err := rt.Open()
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	dev := ctx.Devices()[0]
	logf("imaging %dx%d (PNG of %d bytes) on %s, %d frames", w, h, len(pngData), dev.String(), o.frames)
	res := map[string]any{"device": dev.Name, "width": w, "height": h, "frames": o.frames}

	// The Go implementation.
	in := planeOf(src)
	blurred := blurRef(in)
	coarse, detail := eawRef(blurred, o.scale, float32(o.sharpen))
	want := outputs{blurred.flat(), coarse.flat(), detail.flat(), sobelRef(blurred)}

	pipelines := []struct {
		name string
		run  func(*rt.Context, *image.RGBA, options) (outputs, []time.Duration, error)
	}{{"images", runImages}, {"buffers", runBuffers}}
	for _, p := range pipelines {
		got, times, err := p.run(ctx, src, o)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p.name, err)
		}
		if err := check(p.name, got, want, w, logf); err != nil {
			return res, err
		}
		res[p.name+"_checked_values"] = len(want.blurred) + len(want.mag) + len(want.coarse) + len(want.detail)
		res[p.name+"_digest"] = got.digest()
		if o.bench {
			if len(times) > 1 {
				times = times[1:] // the first frame builds the program
			}
			med, lo, hi := stats(times)
			logf("%-8s a frame: median %.3f ms (min %.3f, max %.3f) over %d frames", p.name, ms(med), ms(lo), ms(hi), len(times))
			res[p.name+"_frame_ms"] = map[string]float64{"median": ms(med), "min": ms(lo), "max": ms(hi)}
		}
		if o.out != "" && p.name == "images" {
			if err := writeOutputs(ctx, o.out, src, got, w, h); err != nil {
				return res, err
			}
		}
	}
	frames, err := Frames.Read(ctx.Queue())
	if err != nil {
		return res, err
	}
	if frames != uint32(o.frames) {
		return res, fmt.Errorf("the device global Frames is %d after %d frames", frames, o.frames)
	}
	res["cache"] = ctx.Stats().Cache
	if o.bench {
		im, bu := res["images_frame_ms"].(map[string]float64), res["buffers_frame_ms"].(map[string]float64)
		res["images_over_buffers"] = im["median"] / bu["median"]
		logf("images/buffers: %.2f", im["median"]/bu["median"])
	}
	logf("every pixel of both pipelines matches the Go implementation (tolerance %g blur, %g Sobel, %g wavelet step)", tolBlur, tolSobel, tolEAW)
	return res, nil
}

// check compares every output pixel with the Go implementation's.
func check(name string, got, want outputs, w int, logf func(string, ...any)) error {
	for _, c := range []struct {
		what      string
		got, want []float32
		tol       float64
		chans     int
	}{
		{"blur", got.blurred, want.blurred, tolBlur, 4},
		{"Sobel magnitude", got.mag, want.mag, tolSobel, 1},
		{"wavelet coarse", got.coarse, want.coarse, tolEAW, 4},
		{"wavelet detail", got.detail, want.detail, tolEAW, 4},
	} {
		if len(c.got) != len(c.want) {
			return fmt.Errorf("%s: %s has %d values, want %d", name, c.what, len(c.got), len(c.want))
		}
		worst, first := maxDiff(c.got, c.want, c.tol)
		if first >= 0 {
			px := first / c.chans
			return fmt.Errorf("%s: %s differs at pixel (%d, %d) channel %d: %v, want %v (tolerance %g)", name, c.what, px%w, px/w, first%c.chans, c.got[first], c.want[first], c.tol)
		}
		logf("%-8s %-16s max |error| %.2g", name, c.what, worst)
	}
	return nil
}

func stats(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// writeOutputs writes the input, and the Sobel magnitude read back through
// an *image.Gray (a conversion from R/FLOAT), as PNG.
func writeOutputs(ctx *rt.Context, dir string, src *image.RGBA, got outputs, w, h int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	q := ctx.Queue()
	mag, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: w, Height: h})
	if err != nil {
		return err
	}
	defer mag.Free()
	if err := mag.Write(q, rt.ImageRegion{}, got.mag); err != nil {
		return err
	}
	gray := image.NewGray(image.Rect(0, 0, w, h))
	if err := mag.Read(q, rt.ImageRegion{}, gray); err != nil {
		return err
	}
	for name, m := range map[string]image.Image{"input.png": src, "sobel.png": gray} {
		var buf bytes.Buffer
		if err := png.Encode(&buf, m); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
