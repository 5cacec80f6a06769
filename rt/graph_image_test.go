package rt_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// samplerFixture is a context with imageKernelsSrc's neighbours kernel
// (an image, a sampler_t argument, an image), an input image and two
// output images.
type samplerFixture struct {
	ctx        *rt.Context
	q          *rt.Queue
	k          *raw.Kernel
	in         rt.Image
	out        [2]rt.Image
	w, h       int
	src, zeros []float32
}

func newSamplerFixture(t *testing.T) *samplerFixture {
	t.Helper()
	ctx := openCPU(t)
	f := &samplerFixture{ctx: ctx, q: ctx.Queue(), w: 37, h: 11}
	var err error
	d := rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderR, Type: rt.Float, Width: f.w, Height: f.h, Access: rt.ReadOnly}
	if f.in, err = rt.NewImage(ctx, d); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no images on this backend: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.in.Free() })
	prog, err := raw.Build(ctx, "images", imageKernelsSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	if f.k, err = prog.Kernel("neighbours"); err != nil {
		t.Fatal(err)
	}
	d.Access = rt.WriteOnly
	for i := range f.out {
		if f.out[i], err = rt.NewImage(ctx, d); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.out[i].Free() })
	}
	f.src = make([]float32, f.w*f.h)
	for i := range f.src {
		f.src[i] = float32(i*i%23) + 0.25
	}
	f.zeros = make([]float32, f.w*f.h)
	if err := f.in.Write(f.q, rt.ImageRegion{}, f.src); err != nil {
		t.Fatal(err)
	}
	return f
}

// The two samplers: they differ at the left and right edges, where
// clamp_to_edge repeats the edge pixel and clamp reads the border (0).
var (
	edgeSampler   = rt.Sampler{Address: rt.ClampToEdge}
	borderSampler = rt.Sampler{Address: rt.Clamp}
)

// launch enqueues neighbours from in to out[i] through s on q.
func (f *samplerFixture) launch(q *rt.Queue, s rt.Sampler, i int) error {
	err := errors.Join(f.k.SetImage(0, f.in, "read_only"), f.k.SetSampler(1, s), f.k.SetImage(2, f.out[i], "write_only"))
	if err != nil {
		return err
	}
	return raw.Submit(q, f.k, rt.Range2(f.w, f.h))
}

// body enqueues the commands the tests record: one launch per sampler.
func (f *samplerFixture) body(q *rt.Queue) error {
	if err := f.launch(q, edgeSampler, 0); err != nil {
		return err
	}
	return f.launch(q, borderSampler, 1)
}

// clear zeroes the output images.
func (f *samplerFixture) clear(t *testing.T) {
	t.Helper()
	for i := range f.out {
		if err := f.out[i].Write(f.q, rt.ImageRegion{}, f.zeros); err != nil {
			t.Fatal(err)
		}
	}
}

// read returns the pixels of the output images.
func (f *samplerFixture) read(t *testing.T) [2][]float32 {
	t.Helper()
	var got [2][]float32
	for i := range f.out {
		got[i] = make([]float32, f.w*f.h)
		if err := f.out[i].Read(f.q, rt.ImageRegion{}, got[i]); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// compare fails unless every pixel of got equals want's bit for bit.
func (f *samplerFixture) compare(t *testing.T, what string, got, want [2][]float32) {
	t.Helper()
	for i := range got {
		for j := range got[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("%s: output %d, pixel (%d, %d) = %v, want %v", what, i, j%f.w, j/f.w, got[i][j], want[i][j])
			}
		}
	}
}

// TestGraphSampler records launches of a kernel with a sampler_t
// argument, each through another sampler, and checks that every replay
// gives, pixel for pixel, what the direct launches give: the graph binds
// the sampler objects themselves (as a command buffer would not on PoCL,
// whose clCommandNDRangeKernelKHR aborts or hangs on a sampler argument:
// such a graph is replayed as a loop). An update that swaps the sampler
// gives what a direct launch through the new one gives.
func TestGraphSampler(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			f := newSamplerFixture(t)
			f.clear(t)
			if err := f.body(f.q); err != nil {
				t.Fatal(err)
			}
			want := f.read(t)
			// The edges tell the samplers apart, so that a swapped or
			// unbound sampler shows.
			if want[0][0] == want[1][0] {
				t.Fatalf("the samplers agree at pixel (0, 0): %v", want[0][0])
			}
			f.clear(t)
			var first *rt.GraphNode
			g, err := f.q.Record("samplers", func(q *rt.Queue) error {
				var err error
				first, err = q.Node(func(q *rt.Queue) error { return f.launch(q, edgeSampler, 0) })
				return errors.Join(err, f.launch(q, borderSampler, 1))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			if native := core.GraphNative(cg(g)); len(native) != 1 || native[0] {
				t.Errorf("a graph with a sampler argument prepared as the device's own graph object: %v", native)
			}
			f.compare(t, "recording", f.read(t), [2][]float32{f.zeros, f.zeros})
			// The kernel object that recorded goes on with other
			// arguments: the graph keeps its own.
			if err := f.k.SetSampler(1, rt.Sampler{Normalized: true, Address: rt.Repeat, Filter: rt.Linear}); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				f.clear(t)
				if err := g.Launch(f.q); err != nil {
					t.Fatal(err)
				}
				f.compare(t, "launch "+string(rune('0'+i)), f.read(t), want)
			}

			// Update: command 0 through the border sampler.
			if err := g.Update(first, func(q *rt.Queue) error { return f.launch(q, borderSampler, 0) }); err != nil {
				t.Fatal(err)
			}
			f.clear(t)
			if err := g.Launch(f.q); err != nil {
				t.Fatal(err)
			}
			f.compare(t, "after the update", f.read(t), [2][]float32{want[1], want[1]})
		})
	}
}

// TestGraphSamplerReleased: a graph whose sampler was released before it
// launches, or before its recording ends, is an error that names the
// graph, the command and the argument, and nothing runs.
func TestGraphSamplerReleased(t *testing.T) {
	f := newSamplerFixture(t)
	f.clear(t)
	g, err := f.q.Record("samplers", f.body)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if err := core.ReleaseSamplers(cx(f.ctx)); err != nil {
		t.Fatal(err)
	}
	err = g.Launch(f.q)
	for _, s := range []string{`launch graph "samplers"`, `command 0 (kernel "neighbours" at `, "argument 1: sampler:", "released"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("launch after the sampler's release: %v, want an error that says %q", err, s)
		}
	}
	if !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("launch after the sampler's release: %v, want an error wrapping ErrInvalidArgument", err)
	}
	f.compare(t, "the refused launch", f.read(t), [2][]float32{f.zeros, f.zeros})

	// Released while recording: Record fails and returns no graph.
	g2, err := f.q.Record("released", func(q *rt.Queue) error {
		if err := f.body(q); err != nil {
			return err
		}
		return core.ReleaseSamplers(cx(f.ctx))
	})
	if g2 != nil || err == nil || !strings.Contains(err.Error(), `finalize graph "released": command 0 (kernel "neighbours"`) || !strings.Contains(err.Error(), "argument 1: sampler:") {
		t.Errorf("sampler released while recording: %v, %v; want an error naming the command and the argument", g2, err)
	}

	// New samplers after the release: a new recording works.
	g3, err := f.q.Record("again", f.body)
	if err != nil {
		t.Fatal(err)
	}
	defer g3.Release()
	if err := g3.Launch(f.q); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t); got[0][0] == 0 && got[1][0] == 0 {
		t.Error("the new graph computed nothing")
	}
}

// The backend "fakesamplers" is the fake backend with images whose kernels
// take samplers and refuse every one: a fault (CL_INVALID_SAMPLER) that a
// real device gives only for a bad handle.
func init() { driver.Register("fakesamplers", fakeSamplersBackend{}) }

type fakeSamplersBackend struct{ fakeBackend }

func (b fakeSamplersBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.fakeBackend.NewContext(devs)
	return fakeSamplersContext{fakeImageContext{c.(*fakeContext)}}, err
}

type fakeSamplersContext struct{ fakeImageContext }

func (c fakeSamplersContext) BuildProgram(source, options string) (driver.Program, error) {
	p, err := c.fakeImageContext.BuildProgram(source, options)
	if err != nil {
		return nil, err
	}
	return fakeSamplersProgram{p.(*fakeProgram)}, nil
}

type fakeSamplersProgram struct{ *fakeProgram }

func (p fakeSamplersProgram) NewKernel(name string) (driver.Kernel, error) {
	k, err := p.fakeProgram.NewKernel(name)
	if err != nil {
		return nil, err
	}
	return fakeSamplerKernel{k.(*fakeKernel)}, nil
}

type fakeSamplerKernel struct{ *fakeKernel }

func (fakeSamplerKernel) SetArgSampler(int, driver.Sampler) error {
	return &driver.Error{Call: "fakeSetArgSampler", Code: -41, Name: "INVALID_SAMPLER"}
}

// TestGraphSamplerRefused: a backend that refuses the recorded sampler
// fails Record with an error that names the graph, the kernel and the
// argument; no graph is returned.
func TestGraphSamplerRefused(t *testing.T) {
	ctx := openFakeBackend(t, "fakesamplers", nil)
	prog, err := raw.Build(ctx, "s", "__kernel void k(read_only image2d_t in, sampler_t s, __global float *out) {}", "")
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
	buf, err := rt.NewBuffer[float32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	g, err := ctx.Queue().Record("refused", func(q *rt.Queue) error {
		if err := errors.Join(k.SetImage(0, img, "read_only"), k.SetSampler(1, rt.Sampler{}), raw.SetBuffer(k, 2, buf)); err != nil {
			return err
		}
		return raw.Submit(q, k, rt.Range1(16))
	})
	want := `finalize graph "refused": command 0 (kernel "k" at `
	if g != nil || err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "set argument 1: fakeSetArgSampler") {
		t.Errorf("Record: %v, %v; want an error that says %q and names argument 1", g, err, want)
	}
}
