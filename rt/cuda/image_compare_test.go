package cuda_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/internal/clcorpus"
	"github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
)

// An image kernel run on both NVIDIA backends, with the same inputs: every
// output (images and buffers) must be the same bytes.

// arg is one kernel argument of a comparison.
type arg struct {
	img     *driver.ImageDesc // an image, filled with random pixels
	smp     *driver.SamplerDesc
	buf     int    // a buffer of buf bytes, zeroed
	scalar  []byte // a value
	floatIn bool   // an image of floats gets values in [0, 1)
}

type compareCase struct {
	name, file, src, opts, kernel string
	global                        [3]int
	dims                          int
	args                          []arg
}

func img2d(order, typ string, w, h int, a driver.MemAccess) arg {
	return arg{img: &driver.ImageDesc{Kind: driver.Image2D, Format: driver.ImageFormat{Order: order, Type: typ}, Width: w, Height: h, Access: a}, floatIn: true}
}

func smp(norm bool, addr, filter string) arg {
	return arg{smp: &driver.SamplerDesc{Normalized: norm, Address: addr, Filter: filter}}
}

func u32(v uint32) arg { return arg{scalar: binary.LittleEndian.AppendUint32(nil, v)} }
func f32(v float32) arg {
	return arg{scalar: binary.LittleEndian.AppendUint32(nil, math.Float32bits(v))}
}

// nvidiaDevices returns the NVIDIA OpenCL device and the CUDA device, or
// skips.
func nvidiaDevices(t *testing.T) (driver.DeviceInfo, driver.DeviceInfo) {
	cps, err := cuda.Backend{}.Platforms()
	if err != nil || len(cps) == 0 || len(cps[0].Devices) == 0 {
		t.Skipf("no CUDA device: %v", err)
	}
	ops, err := opencl.Backend{}.Platforms()
	if err != nil {
		t.Skip(err)
	}
	for _, p := range ops {
		if strings.Contains(p.Name, "NVIDIA") && len(p.Devices) > 0 {
			return p.Devices[0], cps[0].Devices[0]
		}
	}
	t.Skip("no NVIDIA OpenCL device")
	panic("unreachable")
}

// backendEnv is a context and queue of one backend, with its programs by
// source.
type backendEnv struct {
	ctx   driver.Context
	q     driver.Queue
	progs map[string]driver.Program
}

func openEnv(t *testing.T, b driver.Backend, d driver.DeviceInfo) *backendEnv {
	ctx, err := b.NewContext([]driver.DeviceInfo{d})
	if err != nil {
		t.Fatal(err)
	}
	q, err := ctx.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	e := &backendEnv{ctx: ctx, q: q, progs: map[string]driver.Program{}}
	t.Cleanup(func() {
		for _, p := range e.progs {
			p.Release()
		}
		q.Release()
		ctx.Release()
	})
	return e
}

// runCase runs c in e and returns every output's bytes.
func runCase(t *testing.T, e *backendEnv, c compareCase) [][]byte {
	t.Helper()
	ctx, q := e.ctx, e.q
	p, ok := e.progs[c.src+c.opts]
	if !ok {
		var err error
		if p, err = ctx.BuildProgram(c.src, c.opts); err != nil {
			t.Fatal(err)
		}
		e.progs[c.src+c.opts] = p
	}
	k, err := p.NewKernel(c.kernel)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	ic := ctx.(driver.ImageContext)
	iq := q.(driver.ImageQueue)
	rng := rand.New(rand.NewPCG(1, 2))
	type out struct {
		b   driver.Buffer
		img *driver.ImageDesc
		n   int
	}
	var outs []out
	for i, a := range c.args {
		switch {
		case a.img != nil:
			m, err := ic.NewImage(*a.img)
			if err != nil {
				t.Fatalf("argument %d: %v", i, err)
			}
			defer m.Release()
			ext := extent(a.img)
			n := pixelBytes(a.img.Format) * ext[0] * ext[1] * ext[2]
			host := make([]byte, n)
			for j := range host {
				host[j] = byte(rng.Uint32())
			}
			if a.img.Format.Type == "FLOAT" {
				for j := 0; j < n; j += 4 {
					binary.LittleEndian.PutUint32(host[j:], math.Float32bits(rng.Float32()))
				}
			}
			r := driver.ImageRegion{Size: ext}
			if _, err := iq.WriteImage(m, true, r, unsafe.Pointer(&host[0]), nil); err != nil {
				t.Fatal(err)
			}
			if err := k.SetArgBuffer(i, m); err != nil {
				t.Fatalf("argument %d: %v", i, err)
			}
			outs = append(outs, out{b: m, img: a.img, n: n})
		case a.smp != nil:
			s, err := ic.NewSampler(*a.smp)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			if err := k.(driver.SamplerKernel).SetArgSampler(i, s); err != nil {
				t.Fatal(err)
			}
		case a.buf > 0:
			m, err := ctx.NewBuffer(int64(a.buf))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Release()
			z := make([]byte, a.buf)
			if _, err := q.WriteBuffer(m, true, 0, int64(a.buf), unsafe.Pointer(&z[0]), nil); err != nil {
				t.Fatal(err)
			}
			if err := k.SetArgBuffer(i, m); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, out{b: m, n: a.buf})
		default:
			if err := k.SetArgBytes(i, uintptr(len(a.scalar)), unsafe.Pointer(&a.scalar[0])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := q.SubmitKernel(k, driver.NDRange{Dims: c.dims, Global: c.global}, nil); err != nil {
		t.Fatal(err)
	}
	var res [][]byte
	for _, o := range outs {
		host := make([]byte, o.n)
		if o.img != nil {
			r := driver.ImageRegion{Size: extent(o.img)}
			_, err = iq.ReadImage(o.b, true, r, unsafe.Pointer(&host[0]), nil)
		} else {
			_, err = q.ReadBuffer(o.b, true, 0, int64(o.n), unsafe.Pointer(&host[0]), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, host)
	}
	return res
}

// extent is an image's size in pixels as a region gives it.
func extent(d *driver.ImageDesc) [3]int {
	switch d.Kind {
	case driver.Image1DArray:
		return [3]int{d.Width, d.Layers, 1}
	case driver.Image2DArray:
		return [3]int{d.Width, d.Height, d.Layers}
	}
	return [3]int{d.Width, max(d.Height, 1), max(d.Depth, 1)}
}

func pixelBytes(f driver.ImageFormat) int {
	size := map[string]int{"UNORM_INT8": 1, "SNORM_INT8": 1, "SIGNED_INT8": 1, "UNSIGNED_INT8": 1, "FLOAT": 4, "HALF_FLOAT": 2,
		"UNORM_INT16": 2, "SNORM_INT16": 2, "SIGNED_INT16": 2, "UNSIGNED_INT16": 2, "SIGNED_INT32": 4, "UNSIGNED_INT32": 4}[f.Type]
	return size * len(f.Order)
}

// compare runs the cases on NVIDIA's OpenCL and on CUDA and compares.
func compare(t *testing.T, cases []compareCase) {
	cl, cu := nvidiaDevices(t)
	ecl, ecu := openEnv(t, opencl.Backend{}, cl), openEnv(t, cuda.Backend{}, cu)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.file != "" {
				b, err := os.ReadFile(c.file)
				if err != nil {
					t.Skip(err)
				}
				c.src = string(b)
			}
			want := runCase(t, ecl, c)
			got := runCase(t, ecu, c)
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					n := 0
					for j := range want[i] {
						if got[i][j] != want[i][j] {
							if n < 4 {
								t.Errorf("output %d: byte %d: CUDA %d, OpenCL %d", i, j, got[i][j], want[i][j])
							}
							n++
						}
					}
					t.Errorf("output %d: %d of %d bytes differ", i, n, len(want[i]))
				}
			}
		})
	}
}

const probeSrc = `
__constant sampler_t cs_lin = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
__constant sampler_t cs_clamp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void rd(__read_only image2d_t a, sampler_t s, __global float4 *o) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); o[p.y * get_image_width(a) + p.x] = read_imagef(a, s, p - 2); }
__kernel void rdf(__read_only image2d_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (float2)(i * 0.173f - 0.6f, i * 0.091f - 0.3f)); }
__kernel void rdui(__read_only image2d_t a, sampler_t s, __global uint4 *o) {
	int i = get_global_id(0); o[i] = read_imageui(a, s, (int2)(i - 3, 1)); }
__kernel void rdi(__read_only image2d_t a, __global int4 *o) {
	int i = get_global_id(0); o[i] = read_imagei(a, cs_clamp, (int2)(i - 3, 1)); }
__kernel void rdnos(__read_only image2d_t a, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, (int2)(i, 1)); }
__kernel void rdcl(__read_only image2d_t a, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, cs_lin, (float2)(i * 0.1f, 0.3f)); }
__kernel void wrf(__write_only image2d_t a, float v) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); write_imagef(a, p, (float4)(v * p.x, v * p.y, -v * p.x, 0.5f)); }
__kernel void wrui(__write_only image2d_t a, uint v) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); write_imageui(a, p, (uint4)(v * p.x, v * p.y, p.x + p.y, 7)); }
__kernel void r3(__read_only image3d_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int4)(i - 1, 1, 2, 0)) + (float4)(get_image_depth(a)); }
__kernel void w3(__write_only image3d_t a, float v) {
	int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0); write_imagef(a, p, (float4)(v * p.x, p.y, p.z, 1)); }
__kernel void r1(__read_only image1d_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, i - 2); }
__kernel void r1f(__read_only image1d_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, i * 0.07f - 0.2f); }
__kernel void w1(__write_only image1d_t a, float v) { write_imagef(a, get_global_id(0), (float4)(v * get_global_id(0))); }
__kernel void r1a(__read_only image1d_array_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int2)(i - 1, i % 3)) + (float4)(get_image_array_size(a)); }
__kernel void w1a(__write_only image1d_array_t a, float v) {
	write_imagef(a, (int2)(get_global_id(0), get_global_id(1)), (float4)(v * get_global_id(0), get_global_id(1), 0, 1)); }
__kernel void r2a(__read_only image2d_array_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int4)(i - 1, 1, i % 3, 0)) + (float4)(get_image_array_size(a)); }
__kernel void r2af(__read_only image2d_array_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (float4)(i * 0.05f, 0.4f, i % 3, 0)); }
__kernel void w2a(__write_only image2d_array_t a, float v) {
	int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0); write_imagef(a, p, (float4)(v * p.x, p.y, p.z, 1)); }
__kernel void q(__read_only image2d_t a, __write_only image2d_t b, __global int *o) {
	o[0] = get_image_width(a); o[1] = get_image_height(a);
	o[3] = get_image_channel_data_type(a); o[4] = get_image_channel_order(a);
	o[5] = get_image_width(b); o[6] = get_image_height(b); o[7] = get_image_channel_order(b); o[8] = get_image_channel_data_type(b); }
`

func TestImagesMatchOpenCL(t *testing.T) {
	const w, h = 13, 7
	var cases []compareCase
	for _, f := range []string{"FLOAT", "UNORM_INT8", "SNORM_INT16", "HALF_FLOAT", "UNORM_INT16"} {
		for _, o := range []string{"R", "RG", "RGBA"} {
			for _, s := range []arg{smp(false, "clamp_to_edge", "nearest"), smp(false, "clamp", "nearest"), smp(false, "clamp", "linear"), smp(false, "none", "nearest")} {
				cases = append(cases, compareCase{name: "rd " + o + "/" + f + " " + s.smp.Address + " " + s.smp.Filter, src: probeSrc, kernel: "rd", dims: 2, global: [3]int{w, h, 1},
					args: []arg{img2d(o, f, w, h, driver.ReadOnly), s, {buf: 16 * w * h}}})
			}
			for _, s := range []arg{smp(true, "repeat", "linear"), smp(true, "mirrored_repeat", "nearest"), smp(true, "clamp", "linear"), smp(true, "clamp_to_edge", "linear")} {
				cases = append(cases, compareCase{name: "rdf " + o + "/" + f + " " + s.smp.Address + " " + s.smp.Filter, src: probeSrc, kernel: "rdf", dims: 1, global: [3]int{32, 1, 1},
					args: []arg{img2d(o, f, w, h, driver.ReadOnly), s, {buf: 16 * 32}}})
			}
			cases = append(cases, compareCase{name: "wrf " + o + "/" + f, src: probeSrc, kernel: "wrf", dims: 2, global: [3]int{w, h, 1},
				args: []arg{img2d(o, f, w, h, driver.WriteOnly), f32(0.37)}})
		}
	}
	for _, f := range []string{"UNSIGNED_INT8", "UNSIGNED_INT16", "UNSIGNED_INT32"} {
		cases = append(cases, compareCase{name: "rdui " + f, src: probeSrc, kernel: "rdui", dims: 1, global: [3]int{20, 1, 1},
			args: []arg{img2d("RGBA", f, w, h, driver.ReadOnly), smp(false, "clamp", "nearest"), {buf: 16 * 20}}},
			compareCase{name: "wrui " + f, src: probeSrc, kernel: "wrui", dims: 2, global: [3]int{w, h, 1},
				args: []arg{img2d("RGBA", f, w, h, driver.WriteOnly), u32(40)}})
	}
	for _, f := range []string{"SIGNED_INT8", "SIGNED_INT16", "SIGNED_INT32"} {
		cases = append(cases, compareCase{name: "rdi " + f, src: probeSrc, kernel: "rdi", dims: 1, global: [3]int{20, 1, 1},
			args: []arg{img2d("RG", f, w, h, driver.ReadOnly), {buf: 16 * 20}}})
	}
	cases = append(cases,
		compareCase{name: "sampler-less read", src: probeSrc, kernel: "rdnos", dims: 1, global: [3]int{w, 1, 1}, args: []arg{img2d("RGBA", "FLOAT", w, h, driver.ReadOnly), {buf: 16 * w}}},
		compareCase{name: "constant linear sampler", src: probeSrc, kernel: "rdcl", dims: 1, global: [3]int{40, 1, 1}, args: []arg{img2d("RGBA", "UNORM_INT8", w, h, driver.ReadOnly), {buf: 16 * 40}}},
		compareCase{name: "queries", src: probeSrc, kernel: "q", dims: 1, global: [3]int{1, 1, 1}, args: []arg{img2d("RG", "HALF_FLOAT", w, h, driver.ReadOnly), img2d("R", "UNORM_INT8", 5, 3, driver.WriteOnly), {buf: 64}}},
	)
	desc := func(k driver.ImageKind, w, h, d, l int, a driver.MemAccess) arg {
		return arg{img: &driver.ImageDesc{Kind: k, Format: driver.ImageFormat{Order: "RGBA", Type: "FLOAT"}, Width: w, Height: h, Depth: d, Layers: l, Access: a}}
	}
	edge, lin := smp(false, "clamp_to_edge", "nearest"), smp(true, "repeat", "linear")
	cases = append(cases,
		compareCase{name: "image3d read", src: probeSrc, kernel: "r3", dims: 1, global: [3]int{9, 1, 1}, args: []arg{desc(driver.Image3D, 7, 5, 4, 0, driver.ReadOnly), edge, {buf: 16 * 9}}},
		compareCase{name: "image3d write", src: probeSrc, kernel: "w3", dims: 3, global: [3]int{7, 5, 4}, args: []arg{desc(driver.Image3D, 7, 5, 4, 0, driver.WriteOnly), f32(0.3)}},
		compareCase{name: "image1d read", src: probeSrc, kernel: "r1", dims: 1, global: [3]int{12, 1, 1}, args: []arg{desc(driver.Image1D, 9, 0, 0, 0, driver.ReadOnly), edge, {buf: 16 * 12}}},
		compareCase{name: "image1d read linear", src: probeSrc, kernel: "r1f", dims: 1, global: [3]int{30, 1, 1}, args: []arg{desc(driver.Image1D, 9, 0, 0, 0, driver.ReadOnly), lin, {buf: 16 * 30}}},
		compareCase{name: "image1d write", src: probeSrc, kernel: "w1", dims: 1, global: [3]int{9, 1, 1}, args: []arg{desc(driver.Image1D, 9, 0, 0, 0, driver.WriteOnly), f32(0.3)}},
		compareCase{name: "image1d_array read", src: probeSrc, kernel: "r1a", dims: 1, global: [3]int{10, 1, 1}, args: []arg{desc(driver.Image1DArray, 9, 0, 0, 3, driver.ReadOnly), edge, {buf: 16 * 11}}},
		compareCase{name: "image1d_array write", src: probeSrc, kernel: "w1a", dims: 2, global: [3]int{9, 3, 1}, args: []arg{desc(driver.Image1DArray, 9, 0, 0, 3, driver.WriteOnly), f32(0.3)}},
		compareCase{name: "image2d_array read", src: probeSrc, kernel: "r2a", dims: 1, global: [3]int{10, 1, 1}, args: []arg{desc(driver.Image2DArray, 9, 4, 0, 3, driver.ReadOnly), edge, {buf: 16 * 11}}},
		compareCase{name: "image2d_array read linear", src: probeSrc, kernel: "r2af", dims: 1, global: [3]int{30, 1, 1}, args: []arg{desc(driver.Image2DArray, 9, 4, 0, 3, driver.ReadOnly), lin, {buf: 16 * 30}}},
		compareCase{name: "image2d_array write", src: probeSrc, kernel: "w2a", dims: 3, global: [3]int{9, 4, 3}, args: []arg{desc(driver.Image2DArray, 9, 4, 0, 3, driver.WriteOnly), f32(0.3)}},
	)
	compare(t, cases)
}

// TestCorpusImagesMatchOpenCL runs every kernel of ../shared/cl-corpus
// that takes an image or a sampler (DGEN_CL_CORPUS names another copy),
// with inputs that each one's host program would pass.
func TestCorpusImagesMatchOpenCL(t *testing.T) {
	nvidiaDevices(t) // skips without CUDA, before anything is checked
	dir := os.Getenv("DGEN_CL_CORPUS")
	if dir == "" {
		var err error
		if dir, err = clcorpus.Dir(); err != nil {
			t.Skip(err)
		}
	}
	const w, h = 64, 32
	pyf := dir + "/pyopencl/image_filters_using_image2d_t.cl"
	u8 := func(a driver.MemAccess) arg { return img2d("RGBA", "UNSIGNED_INT8", w, h, a) }
	cases := []compareCase{
		{name: "gray_scale", file: pyf, kernel: "gray_scale", dims: 2, global: [3]int{w, h, 1},
			args: []arg{u8(driver.ReadOnly), u8(driver.WriteOnly), smp(false, "clamp_to_edge", "nearest")}},
		{name: "brightness_adj", file: pyf, kernel: "brightness_adj", dims: 2, global: [3]int{w, h, 1},
			args: []arg{u8(driver.ReadOnly), u8(driver.WriteOnly), smp(false, "clamp_to_edge", "nearest"), f32(1.3), {scalar: f4(100, 110, 120, 130)}}},
		{name: "gaussian_blur", file: pyf, kernel: "gaussian_blur", dims: 2, global: [3]int{w, h, 1},
			args: []arg{u8(driver.ReadOnly), u8(driver.WriteOnly), smp(false, "clamp", "nearest"), img2d("RGBA", "UNSIGNED_INT8", 5, 5, driver.ReadOnly), {scalar: []byte{5, 0}}}},
		{name: "image_bandwidth_v1", file: dir + "/clpeak/src/opencl/kernels/image_bandwidth_kernels.cl", kernel: "image_bandwidth_v1", dims: 1, global: [3]int{256, 1, 1},
			args: []arg{img2d("RGBA", "FLOAT", w, h, driver.ReadOnly), {buf: 4 * 256}}},
	}
	if files, err := clcorpus.Load(); err == nil { // every image kernel of the corpus has its case
		for _, f := range files {
			for _, k := range f.Kernels {
				// dgen/ holds files written for the front end's tests, not
				// kernels of others.
				if takesImages(k) && !strings.HasPrefix(f.Path, "dgen/") && !slices.ContainsFunc(cases, func(c compareCase) bool { return c.kernel == k.Name }) {
					t.Errorf("%s: kernel %s takes images or samplers, and no case runs it", f.Path, k.Name)
				}
			}
		}
	}
	compare(t, cases)
}

// takesImages reports a kernel with an image or sampler parameter.
func takesImages(k clcorpus.Kernel) bool {
	for _, p := range k.Params {
		if p.NoMap != nil && (strings.HasPrefix(*p.NoMap, "image") || *p.NoMap == "sampler_t") {
			return true
		}
	}
	return false
}

func f4(a, b, c, d float32) []byte {
	var out []byte
	for _, v := range []float32{a, b, c, d} {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
	}
	return out
}

// TestRefusals checks on CUDA what the backend refuses, each with an error
// wrapping errors.ErrUnsupported that names it: a kernel of a program
// whose sibling it cannot run is built and launched, the sibling is not; a
// format CUDA arrays do not hold; unnormalised coordinates with repeat
// addressing.
func TestRefusals(t *testing.T) {
	_, cu := nvidiaDevices(t)
	e := openEnv(t, cuda.Backend{}, cu)
	const src = `__kernel void w1b(__write_only image1d_buffer_t a, float4 v) { write_imagef(a, get_global_id(0), v); }
__kernel void plain(__global float *o) { o[get_global_id(0)] = 3.0f; }`
	p, err := e.ctx.BuildProgram(src, "")
	if err != nil {
		t.Fatalf("a program with one kernel CUDA cannot run: %v", err)
	}
	defer p.Release()
	if _, err := p.NewKernel("w1b"); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "image1d_buffer_t") || !strings.Contains(err.Error(), "DGEN_BACKEND=opencl") {
		t.Errorf("NewKernel(w1b) = %v, want ErrUnsupported naming image1d_buffer_t", err)
	}
	k, err := p.NewKernel("plain")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	b, err := e.ctx.NewBuffer(16)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	k.SetArgBuffer(0, b)
	if err := e.q.SubmitKernel(k, driver.NDRange{Dims: 1, Global: [3]int{4, 1, 1}}, nil); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 4)
	if _, err := e.q.ReadBuffer(b, true, 0, 16, unsafe.Pointer(&out[0]), nil); err != nil || out[3] != 3 {
		t.Errorf("plain wrote %v (%v)", out, err)
	}
	ic := e.ctx.(driver.ImageContext)
	if _, err := ic.NewImage(driver.ImageDesc{Kind: driver.Image2D, Format: driver.ImageFormat{Order: "BGRA", Type: "UNORM_INT8"}, Width: 4, Height: 4}); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "BGRA/UNORM_INT8") {
		t.Errorf("NewImage(BGRA) = %v, want ErrUnsupported naming the format", err)
	}
	if _, err := ic.NewSampler(driver.SamplerDesc{Address: "repeat", Filter: "nearest"}); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "unnormalised") {
		t.Errorf("NewSampler(unnormalised repeat) = %v, want ErrUnsupported", err)
	}
}

// TestFillMatchesOpenCL fills images of each channel type with one colour
// on both backends: the pixels are the same bytes.
func TestFillMatchesOpenCL(t *testing.T) {
	cl, cu := nvidiaDevices(t)
	envs := []*backendEnv{openEnv(t, opencl.Backend{}, cl), openEnv(t, cuda.Backend{}, cu)}
	for _, typ := range []string{"UNORM_INT8", "UNORM_INT16", "SNORM_INT8", "SNORM_INT16", "HALF_FLOAT", "FLOAT", "SIGNED_INT8", "UNSIGNED_INT16", "SIGNED_INT32"} {
		color := f4(0.3, 0.5, -0.2, 1.7)
		if strings.Contains(typ, "SIGNED_INT") {
			color = f4(0, 0, 0, 0)
			for i, v := range []int32{300, -5, 70000, -200} {
				binary.LittleEndian.PutUint32(color[4*i:], uint32(v))
			}
		}
		var got [][]byte
		for _, e := range envs {
			d := driver.ImageDesc{Kind: driver.Image2D, Format: driver.ImageFormat{Order: "RGBA", Type: typ}, Width: 5, Height: 3}
			m, err := e.ctx.(driver.ImageContext).NewImage(d)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Release()
			iq := e.q.(driver.ImageQueue)
			ev, err := iq.FillImage(m, [16]byte(color), [3]int{1, 1, 0}, [3]int{3, 2, 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ev.Wait()
			ev.Release()
			host := make([]byte, 3*2*pixelBytes(d.Format))
			if _, err := iq.ReadImage(m, true, driver.ImageRegion{Origin: [3]int{1, 1, 0}, Size: [3]int{3, 2, 1}}, unsafe.Pointer(&host[0]), nil); err != nil {
				t.Fatal(err)
			}
			got = append(got, host)
		}
		if !bytes.Equal(got[0], got[1]) {
			t.Errorf("%s: CUDA % x, OpenCL % x", typ, got[1][:pixelBytes(driver.ImageFormat{Order: "RGBA", Type: typ})], got[0][:pixelBytes(driver.ImageFormat{Order: "RGBA", Type: typ})])
		}
	}
}
