package cuda

/*
#include <stdlib.h>
#include "dgen_cu.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// Images on CUDA. An image is a CUDA array (created for surface loads and
// stores, so that kernels both read and write it) with a surface object
// and texture objects: one per sampler state that a kernel reads it with,
// created on first use and kept until the image is released, so that a
// launch creates none. The kernels' image parameters are rewritten to take
// these objects (ptximage.go). Only the formats that CUDA arrays represent
// are offered: the channel orders R, RG and RGBA (CUDA has no swizzle),
// with every channel type but the packed ones; a context over several
// devices has no images (an array belongs to one device).

var (
	_ driver.ImageContext  = (*context)(nil)
	_ driver.ImageQueue    = (*queue)(nil)
	_ driver.SamplerKernel = (*kernel)(nil)
	_ driver.NativeBuffer  = (*image)(nil)
	_ driver.NativeSampler = sampler(0)
)

var (
	errImagesOneDevice = fmt.Errorf("%w: images on CUDA need a context of one device", errors.ErrUnsupported)
	imageOrders        = []string{"R", "RG", "RGBA"}
	imageIDs           atomic.Uint64 // the last image's id
	liveImages         sync.Map      // an image's handle → *image
)

// channelType is how a CUDA array holds an OpenCL channel data type.
type channelType struct {
	name   string
	format [3]C.int // CUarray_format for 1, 2 and 4 channels
	size   int      // bytes per channel
	code   uint32   // OpenCL's CL_ code, which kernels query
	asInt  bool     // read as integers (CU_TRSF_READ_AS_INTEGER)
}

func same(f C.int) [3]C.int { return [3]C.int{f, f, f} }

var channelTypes = []channelType{
	{"UNORM_INT8", [3]C.int{0xc0, 0xc1, 0xc2}, 1, 0x10D2, false},
	{"UNORM_INT16", [3]C.int{0xc3, 0xc4, 0xc5}, 2, 0x10D3, false},
	{"SNORM_INT8", [3]C.int{0xc6, 0xc7, 0xc8}, 1, 0x10D0, false},
	{"SNORM_INT16", [3]C.int{0xc9, 0xca, 0xcb}, 2, 0x10D1, false},
	{"SIGNED_INT8", same(0x08), 1, 0x10D7, true},
	{"SIGNED_INT16", same(0x09), 2, 0x10D8, true},
	{"SIGNED_INT32", same(0x0a), 4, 0x10D9, true},
	{"UNSIGNED_INT8", same(0x01), 1, 0x10DA, true},
	{"UNSIGNED_INT16", same(0x02), 2, 0x10DB, true},
	{"UNSIGNED_INT32", same(0x03), 4, 0x10DC, true},
	{"HALF_FLOAT", same(0x10), 2, 0x10DD, false},
	{"FLOAT", same(0x20), 4, 0x10DE, false},
}

// channelOrders are the OpenCL codes of the orders CUDA arrays hold.
var channelOrders = map[string]uint32{"R": 0x10B0, "RG": 0x10B2, "RGBA": 0x10B5}

// pixelFormat is an image format as a CUDA array holds it.
type pixelFormat struct {
	typ      *channelType
	channels int
	order    uint32
}

func (f pixelFormat) pixelSize() int { return f.typ.size * f.channels }

// formatOf returns how CUDA holds f, or an error wrapping
// errors.ErrUnsupported that names it.
func formatOf(f driver.ImageFormat) (pixelFormat, error) {
	order, ok := channelOrders[f.Order]
	for i := range channelTypes {
		if ok && channelTypes[i].name == f.Type {
			return pixelFormat{typ: &channelTypes[i], channels: len(f.Order), order: order}, nil
		}
	}
	return pixelFormat{}, fmt.Errorf("%w: CUDA arrays do not hold the image format %v (they hold the orders R, RG and RGBA of unpacked channel types); DGEN_BACKEND=opencl runs it", errors.ErrUnsupported, f)
}

// ImageFormats implements driver.ImageContext: the formats CUDA arrays
// hold, for every kind but image1d_buffer_t.
func (c *context) ImageFormats(k driver.ImageKind, a driver.MemAccess) ([]driver.ImageFormat, error) {
	if len(c.devs) != 1 || k == driver.Image1DBuffer {
		return nil, nil
	}
	var out []driver.ImageFormat
	for _, o := range imageOrders {
		for _, t := range channelTypes {
			out = append(out, driver.ImageFormat{Order: o, Type: t.name})
		}
	}
	return out, nil
}

// image is a CUDA array with its surface object and texture objects.
type image struct {
	c      *context
	d      *device
	arr    C.CUarray
	desc   driver.ImageDesc
	format pixelFormat
	id     uint64
	surf   C.ulonglong // the surface object
	tex    C.ulonglong // the texture object with unnormalized, clamp_to_edge, nearest

	mu       sync.Mutex
	texs     map[sampler]C.ulonglong
	released bool
}

// Handle implements driver.NativeBuffer: the image's id, by which a
// kernel finds it when the argument is set.
func (m *image) Handle() uint64 { return m.id }

// NewImage implements driver.ImageContext: a CUDA array for surface loads
// and stores, with its surface object and a texture object for queries.
func (c *context) NewImage(d driver.ImageDesc) (driver.Buffer, error) {
	if len(c.devs) != 1 {
		return nil, errImagesOneDevice
	}
	if d.Kind == driver.Image1DBuffer || d.Kind < driver.Image1D || d.Kind > driver.Image3D {
		return nil, fmt.Errorf("cuArray3DCreate: %w: %v images; DGEN_BACKEND=opencl runs them", errors.ErrUnsupported, d.Kind)
	}
	f, err := formatOf(d.Format)
	if err != nil {
		return nil, err
	}
	w, h, dep, flags := d.Width, 0, 0, C.int(2) // CUDA_ARRAY3D_SURFACE_LDST
	switch d.Kind {
	case driver.Image1DArray:
		dep, flags = d.Layers, flags|1 // CUDA_ARRAY3D_LAYERED
	case driver.Image2D:
		h = d.Height
	case driver.Image2DArray:
		h, dep, flags = d.Height, d.Layers, flags|1
	case driver.Image3D:
		h, dep = d.Height, d.Depth
	}
	m := &image{c: c, d: c.devs[0], desc: d, format: f, id: imageIDs.Add(1)<<1 | 1}
	if err := cuError("cuArray3DCreate", C.dgen_array_create(m.d.ctx, &m.arr, C.size_t(w), C.size_t(h), C.size_t(dep),
		f.typ.format[min(f.channels, 3)-1], C.int(f.channels), flags)); err != nil {
		return nil, err
	}
	err = cuError("cuSurfObjectCreate", C.dgen_surf_create(m.d.ctx, &m.surf, m.arr))
	if err == nil {
		m.tex, err = m.newTexture(sampler(0).with(driver.SamplerDesc{Address: "clamp_to_edge", Filter: "nearest"}))
	}
	if err != nil {
		m.Release()
		return nil, err
	}
	liveImages.Store(m.id, m)
	return m, nil
}

// Release destroys the image's objects and frees its array.
func (m *image) Release() error {
	m.mu.Lock()
	if m.released {
		m.mu.Unlock()
		return nil
	}
	m.released = true
	texs := m.texs
	m.texs = nil
	m.mu.Unlock()
	liveImages.Delete(m.id)
	m.d.settleRings() // a record may take one of the image's objects
	var errs []error
	for _, t := range texs {
		errs = append(errs, cuError("cuTexObjectDestroy", C.dgen_obj_destroy(m.d.ctx, t, 0)))
	}
	if m.tex != 0 {
		errs = append(errs, cuError("cuTexObjectDestroy", C.dgen_obj_destroy(m.d.ctx, m.tex, 0)))
	}
	if m.surf != 0 {
		errs = append(errs, cuError("cuSurfObjectDestroy", C.dgen_obj_destroy(m.d.ctx, m.surf, 1)))
	}
	errs = append(errs, cuError("cuArrayDestroy", C.dgen_array_destroy(m.d.ctx, m.arr)))
	return errors.Join(errs...)
}

// CUDA's address and filter modes (CUaddress_mode, CUfilter_mode).
var (
	cuAddress = map[string]C.int{"none": 1, "clamp_to_edge": 1, "clamp": 3, "repeat": 0, "mirrored_repeat": 2}
	cuFilter  = map[string]C.int{"nearest": 0, "linear": 1}
	addresses = []string{"none", "clamp_to_edge", "clamp", "repeat", "mirrored_repeat"}
	filters   = []string{"nearest", "linear"}
)

// sampler is a sampler's state packed in an integer, its handle: bit 0
// normalized coordinates, then the addressing mode and the filter as
// indices of addresses and filters.
type sampler uint64

// with returns the sampler of d.
func (sampler) with(d driver.SamplerDesc) sampler {
	s := sampler(0)
	if d.Normalized {
		s = 1
	}
	for i, a := range addresses {
		if a == d.Address {
			s |= sampler(i) << 8
		}
	}
	for i, f := range filters {
		if f == d.Filter {
			s |= sampler(i) << 16
		}
	}
	return s
}

func (s sampler) desc() driver.SamplerDesc {
	return driver.SamplerDesc{Normalized: s&1 != 0, Address: addresses[int(s>>8&0xff)%len(addresses)], Filter: filters[int(s>>16&0xff)%len(filters)]}
}

func (s sampler) Handle() uint64 { return uint64(s) }
func (s sampler) Release() error { return nil }

// checkSampler returns an error wrapping errors.ErrUnsupported for a
// sampler CUDA lacks: repeat and mirrored repeat address only normalized
// coordinates.
func checkSampler(d driver.SamplerDesc) error {
	if _, ok := cuAddress[d.Address]; !ok {
		return fmt.Errorf("%w: addressing mode %q", driver.ErrInvalidBinary, d.Address)
	}
	if _, ok := cuFilter[d.Filter]; !ok {
		return fmt.Errorf("%w: filter mode %q", driver.ErrInvalidBinary, d.Filter)
	}
	if !d.Normalized && (d.Address == "repeat" || d.Address == "mirrored_repeat") {
		return fmt.Errorf("%w: CUDA samples with %s addressing only at normalized coordinates, and this sampler's are unnormalised; DGEN_BACKEND=opencl runs it", errors.ErrUnsupported, d.Address)
	}
	return nil
}

// NewSampler implements driver.ImageContext: a sampler is its state,
// which the texture objects of each image take.
func (c *context) NewSampler(d driver.SamplerDesc) (driver.Sampler, error) {
	if err := checkSampler(d); err != nil {
		return nil, fmt.Errorf("create sampler: %w", err)
	}
	return sampler(0).with(d), nil
}

// newTexture creates a texture object of the image with s's state.
func (m *image) newTexture(s sampler) (C.ulonglong, error) {
	d := s.desc()
	if err := checkSampler(d); err != nil {
		return 0, fmt.Errorf("cuTexObjectCreate: %w", err)
	}
	flags := C.int(0)
	if m.format.typ.asInt {
		if d.Filter == "linear" {
			return 0, fmt.Errorf("cuTexObjectCreate: %w: linear filtering of an image of %s", driver.ErrInvalidBinary, m.format.typ.name)
		}
		flags |= 1 // CU_TRSF_READ_AS_INTEGER
	}
	if d.Normalized {
		flags |= 2 // CU_TRSF_NORMALIZED_COORDINATES
	}
	var t C.ulonglong
	err := cuError("cuTexObjectCreate", C.dgen_tex_create(m.d.ctx, &t, m.arr, cuAddress[d.Address], cuFilter[d.Filter], flags))
	return t, err
}

// texture returns the image's texture object with s's state, creating
// it on first use; the driver call runs without the image's lock.
func (m *image) texture(s sampler) (C.ulonglong, error) {
	m.mu.Lock()
	t, ok := m.texs[s]
	m.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := m.newTexture(s)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.texs[s]; ok || m.released {
		C.dgen_obj_destroy(m.d.ctx, t, 0)
		if m.released {
			return 0, errors.New("cuTexObjectCreate: the image is released")
		}
		return old, nil
	}
	if m.texs == nil {
		m.texs = make(map[sampler]C.ulonglong)
	}
	m.texs[s] = t
	return t, nil
}

// asImage returns b as an image of this backend.
func asImage(call string, b driver.Buffer) (*image, error) {
	m, ok := b.(*image)
	if !ok || m == nil {
		return nil, fmt.Errorf("%s: %T is not an image of the CUDA backend", call, b)
	}
	return m, nil
}

// box checks origin and size against the image and returns them as
// CUDA's array coordinates: x in bytes, and the layer of an array kind in
// y (1D) or z (2D).
func (m *image) box(call string, origin, size [3]int) (o, s [3]C.size_t, err error) {
	d := m.desc
	ext := [3]int{d.Width, max(d.Height, 1), max(d.Depth, 1)}
	switch d.Kind {
	case driver.Image1DArray:
		ext[1] = d.Layers
	case driver.Image2DArray:
		ext[2] = d.Layers
	}
	for i := range 3 {
		if origin[i] < 0 || size[i] < 0 || origin[i]+size[i] > ext[i] {
			return o, s, &driver.Error{Call: call, Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (box %v at %v of an image of %v)", size, origin, ext)}
		}
		o[i], s[i] = C.size_t(origin[i]), C.size_t(size[i])
	}
	px := C.size_t(m.format.pixelSize())
	o[0], s[0] = o[0]*px, s[0]*px
	if d.Kind == driver.Image1DArray { // CUDA's layered 1D array has its layers in z
		o[1], o[2], s[1], s[2] = 0, o[1], 1, s[1]
	}
	return o, s, nil
}

// copy3d runs one cuMemcpy3DAsync of the box s at so of src (nil: host
// memory at host) to do of dst (nil: host).
func (q *queue) copy3d(call string, src, dst *image, host unsafe.Pointer, pitch, slice int64, so, do, s [3]C.size_t, blocking bool, wait []driver.Event) (driver.Event, error) {
	var sa, da C.CUarray
	if src != nil {
		sa = src.arr
	}
	if dst != nil {
		da = dst.arr
	}
	want := !blocking
	var wb [8]C.CUevent
	nw, wp, start, end, err := q.prologue(&wb, wait, want)
	if err != nil {
		return nil, err
	}
	sync := C.int(0)
	if blocking {
		sync = 1
	}
	var step C.int
	r := C.dgen_copy3d(q.d.ctx, q.s, sa, da, (*C.uchar)(host), C.size_t(pitch), C.size_t(slice), &so[0], &do[0], &s[0],
		nw, wp, handle(start), handle(end), sync, &step)
	return q.finish(call, r, step, start, end, want)
}

// rwImage reads or writes region r of img from or to host memory at p.
func (q *queue) rwImage(read bool, img driver.Buffer, blocking bool, r driver.ImageRegion, p unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	const call = "cuMemcpy3DAsync"
	m, err := asImage(call, img)
	if err != nil {
		return nil, err
	}
	o, s, err := m.box(call, r.Origin, r.Size)
	if err != nil {
		return nil, err
	}
	pitch, slice := r.RowPitch, r.SlicePitch
	if pitch == 0 {
		pitch = int64(s[0])
	}
	if slice == 0 {
		slice = pitch * int64(s[1])
	}
	if m.desc.Kind == driver.Image1DArray { // one row per layer
		slice = pitch
		if r.SlicePitch != 0 {
			slice = r.SlicePitch
		}
	}
	var zero [3]C.size_t
	if read {
		return q.copy3d(call, m, nil, p, pitch, slice, o, zero, s, blocking, wait)
	}
	return q.copy3d(call, nil, m, p, pitch, slice, zero, o, s, blocking, wait)
}

// ReadImage implements driver.ImageQueue with cuMemcpy3DAsync.
func (q *queue) ReadImage(img driver.Buffer, blocking bool, r driver.ImageRegion, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.rwImage(true, img, blocking, r, dst, wait)
}

// WriteImage implements driver.ImageQueue with cuMemcpy3DAsync.
func (q *queue) WriteImage(img driver.Buffer, blocking bool, r driver.ImageRegion, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.rwImage(false, img, blocking, r, src, wait)
}

// CopyImage implements driver.ImageQueue with cuMemcpy3DAsync between
// arrays.
func (q *queue) CopyImage(src, dst driver.Buffer, srcOrigin, dstOrigin, size [3]int, wait []driver.Event) (driver.Event, error) {
	const call = "cuMemcpy3DAsync"
	s, err := asImage(call, src)
	if err != nil {
		return nil, err
	}
	d, err := asImage(call, dst)
	if err != nil {
		return nil, err
	}
	so, sz, err := s.box(call, srcOrigin, size)
	if err != nil {
		return nil, err
	}
	do, _, err := d.box(call, dstOrigin, size)
	if err != nil {
		return nil, err
	}
	return q.copy3d(call, s, d, nil, 0, 0, so, do, sz, false, wait)
}

// FillImage implements driver.ImageQueue: the pixel of color in the
// image's format, repeated over the box in host memory and copied in.
func (q *queue) FillImage(img driver.Buffer, color [16]byte, origin, size [3]int, wait []driver.Event) (driver.Event, error) {
	const call = "cuMemcpy3DAsync"
	m, err := asImage(call, img)
	if err != nil {
		return nil, err
	}
	o, s, err := m.box(call, origin, size)
	if err != nil {
		return nil, err
	}
	px := packPixel(m.format, color)
	n := int(s[0]) * int(s[1]) * int(s[2])
	buf := C.malloc(C.size_t(max(n, 1)))
	defer C.free(buf) // pageable memory: CUDA copies it before the call returns
	host := unsafe.Slice((*byte)(buf), max(n, 1))
	for i := 0; i+len(px) <= n; i += len(px) {
		copy(host[i:], px)
	}
	var zero [3]C.size_t
	return q.copy3d(call, nil, m, buf, int64(s[0]), int64(s[0]*s[1]), zero, o, s, false, wait)
}

// packPixel returns color (four float32, int32 or uint32 values, as the
// channel type needs) as a pixel of format f, converted as NVIDIA's
// OpenCL converts a fill colour (measured on an H100, driver 580): the
// normalized types scaled in float32 and rounded toward zero, half floats
// rounded toward zero, both saturated; integer types saturated.
func packPixel(f pixelFormat, color [16]byte) []byte {
	out := make([]byte, 0, f.pixelSize())
	for c := range f.channels {
		u := binary.LittleEndian.Uint32(color[4*c:])
		fv := float64(math.Float32frombits(u))
		var v uint64
		switch f.typ.name {
		case "UNORM_INT8":
			v = uint64(norm(fv, 0, 255))
		case "UNORM_INT16":
			v = uint64(norm(fv, 0, 65535))
		case "SNORM_INT8":
			v = uint64(int64(norm(fv, -127, 127)))
		case "SNORM_INT16":
			v = uint64(int64(norm(fv, -32767, 32767)))
		case "SIGNED_INT8":
			v = uint64(min(max(int64(int32(u)), math.MinInt8), math.MaxInt8))
		case "SIGNED_INT16":
			v = uint64(min(max(int64(int32(u)), math.MinInt16), math.MaxInt16))
		case "UNSIGNED_INT8":
			v = uint64(min(u, math.MaxUint8))
		case "UNSIGNED_INT16":
			v = uint64(min(u, math.MaxUint16))
		case "HALF_FLOAT":
			v = uint64(toHalf(math.Float32frombits(u)))
		default: // 32-bit types: the bits as they are
			v = uint64(u)
		}
		for b := range f.typ.size {
			out = append(out, byte(v>>(8*b)))
		}
	}
	return out
}

// norm scales a normalized value to [lo, hi] (the product in float32),
// rounding toward zero; NaN is 0.
func norm(f, lo, hi float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return math.Trunc(min(max(float64(float32(f)*float32(hi)), lo), hi))
}

// toHalf converts f to a half-precision float, rounding toward zero:
// beyond the largest half it is the largest half, infinity stays
// infinite.
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case b&0x7fffffff == 0x7f800000: // infinity
		return sign | 0x7c00
	case exp >= 31: // beyond the largest half
		return sign | 0x7bff
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		return sign | uint16((mant|0x800000)>>uint(14-exp))
	}
	return sign | uint16(uint32(exp)<<10|mant>>13)
}
