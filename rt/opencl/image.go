package opencl

/*
#include "dgen_image.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// The image binding: clCreateImage, clGetSupportedImageFormats, the image
// transfers and clCreateSampler. Images are buffers (cl_mem) to the rest of
// the backend, so that kernels take them through SetArgBuffer.

var (
	_ driver.ImageContext  = (*context)(nil)
	_ driver.ImageQueue    = queue{}
	_ driver.SamplerKernel = kernel{}
)

// channelOrders and channelTypes name OpenCL's codes as driver.ImageFormat
// spells them. Codes of OpenCL 2.0 and later are given by value.
var (
	channelOrders = map[C.cl_channel_order]string{
		C.CL_R: "R", C.CL_A: "A", C.CL_RG: "RG", C.CL_RA: "RA", C.CL_RGB: "RGB", C.CL_RGBA: "RGBA",
		C.CL_BGRA: "BGRA", C.CL_ARGB: "ARGB", C.CL_INTENSITY: "INTENSITY", C.CL_LUMINANCE: "LUMINANCE",
		C.CL_Rx: "Rx", C.CL_RGx: "RGx", C.CL_RGBx: "RGBx", C.CL_DEPTH: "DEPTH", C.CL_DEPTH_STENCIL: "DEPTH_STENCIL",
		0x10BF: "sRGB", 0x10C0: "sRGBx", 0x10C1: "sRGBA", 0x10C2: "sBGRA", 0x10C3: "ABGR",
	}
	channelTypes = map[C.cl_channel_type]string{
		C.CL_SNORM_INT8: "SNORM_INT8", C.CL_SNORM_INT16: "SNORM_INT16", C.CL_UNORM_INT8: "UNORM_INT8",
		C.CL_UNORM_INT16: "UNORM_INT16", C.CL_UNORM_SHORT_565: "UNORM_SHORT_565", C.CL_UNORM_SHORT_555: "UNORM_SHORT_555",
		C.CL_UNORM_INT_101010: "UNORM_INT_101010", C.CL_SIGNED_INT8: "SIGNED_INT8", C.CL_SIGNED_INT16: "SIGNED_INT16",
		C.CL_SIGNED_INT32: "SIGNED_INT32", C.CL_UNSIGNED_INT8: "UNSIGNED_INT8", C.CL_UNSIGNED_INT16: "UNSIGNED_INT16",
		C.CL_UNSIGNED_INT32: "UNSIGNED_INT32", C.CL_HALF_FLOAT: "HALF_FLOAT", C.CL_FLOAT: "FLOAT",
		C.CL_UNORM_INT24: "UNORM_INT24", 0x10E0: "UNORM_INT_101010_2",
	}
	imageTypes = [...]C.cl_mem_object_type{
		driver.Image1D: C.CL_MEM_OBJECT_IMAGE1D, driver.Image1DBuffer: C.CL_MEM_OBJECT_IMAGE1D_BUFFER,
		driver.Image1DArray: C.CL_MEM_OBJECT_IMAGE1D_ARRAY, driver.Image2D: C.CL_MEM_OBJECT_IMAGE2D,
		driver.Image2DArray: C.CL_MEM_OBJECT_IMAGE2D_ARRAY, driver.Image3D: C.CL_MEM_OBJECT_IMAGE3D,
	}
	memFlags     = [...]C.cl_mem_flags{driver.ReadWrite: C.CL_MEM_READ_WRITE, driver.ReadOnly: C.CL_MEM_READ_ONLY, driver.WriteOnly: C.CL_MEM_WRITE_ONLY}
	addressModes = map[string]C.cl_addressing_mode{
		"none": C.CL_ADDRESS_NONE, "clamp_to_edge": C.CL_ADDRESS_CLAMP_TO_EDGE, "clamp": C.CL_ADDRESS_CLAMP,
		"repeat": C.CL_ADDRESS_REPEAT, "mirrored_repeat": C.CL_ADDRESS_MIRRORED_REPEAT,
	}
	filterModes = map[string]C.cl_filter_mode{"nearest": C.CL_FILTER_NEAREST, "linear": C.CL_FILTER_LINEAR}
)

// codeOf returns the code that m maps to name.
func codeOf[K comparable](m map[K]string, name string) (K, bool) {
	for k, v := range m {
		if v == name {
			return k, true
		}
	}
	var zero K
	return zero, false
}

func imageType(call string, k driver.ImageKind) (C.cl_mem_object_type, error) {
	if int(k) >= len(imageTypes) || imageTypes[k] == 0 {
		return 0, fmt.Errorf("%s: %w: image kind %v", call, errors.ErrUnsupported, k)
	}
	return imageTypes[k], nil
}

// ImageFormats implements driver.ImageContext with clGetSupportedImageFormats.
// A code with no name is spelled by value, "0x10C4".
func (c *context) ImageFormats(k driver.ImageKind, a driver.MemAccess) ([]driver.ImageFormat, error) {
	t, err := imageType("clGetSupportedImageFormats", k)
	if err != nil {
		return nil, err
	}
	var n C.cl_uint
	if err := check("clGetSupportedImageFormats", C.clGetSupportedImageFormats(c.h, memFlags[a], t, 0, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	fs := make([]C.cl_image_format, n)
	if err := check("clGetSupportedImageFormats", C.clGetSupportedImageFormats(c.h, memFlags[a], t, n, &fs[0], nil)); err != nil {
		return nil, err
	}
	out := make([]driver.ImageFormat, len(fs))
	for i, f := range fs {
		o, ok := channelOrders[f.image_channel_order]
		if !ok {
			o = fmt.Sprintf("%#x", uint32(f.image_channel_order))
		}
		ty, ok := channelTypes[f.image_channel_data_type]
		if !ok {
			ty = fmt.Sprintf("%#x", uint32(f.image_channel_data_type))
		}
		out[i] = driver.ImageFormat{Order: o, Type: ty}
	}
	return out, nil
}

// NewImage implements driver.ImageContext with clCreateImage.
func (c *context) NewImage(d driver.ImageDesc) (driver.Buffer, error) {
	t, err := imageType("clCreateImage", d.Kind)
	if err != nil {
		return nil, err
	}
	order, ok1 := codeOf(channelOrders, d.Format.Order)
	typ, ok2 := codeOf(channelTypes, d.Format.Type)
	if !ok1 || !ok2 {
		return nil, newError("clCreateImage", int32(C.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), "")
	}
	var buf C.cl_mem
	if d.Kind == driver.Image1DBuffer {
		if buf, err = asBuffer("clCreateImage", d.Buffer); err != nil {
			return nil, err
		}
	}
	var code C.cl_int
	h := C.dgen_create_image(c.h, memFlags[d.Access], order, typ, t, C.size_t(d.Width), C.size_t(d.Height), C.size_t(d.Depth), C.size_t(d.Layers), buf, &code)
	if err := check("clCreateImage", code); err != nil {
		return nil, err
	}
	return buffer{h, c}, nil
}

type sampler struct{ h C.cl_sampler }

func (s sampler) Release() error { return check("clReleaseSampler", C.clReleaseSampler(s.h)) }

// NewSampler implements driver.ImageContext with clCreateSampler.
func (c *context) NewSampler(d driver.SamplerDesc) (driver.Sampler, error) {
	am, ok1 := addressModes[d.Address]
	fm, ok2 := filterModes[d.Filter]
	if !ok1 || !ok2 {
		return nil, newError("clCreateSampler", int32(C.CL_INVALID_VALUE), "")
	}
	norm := C.cl_bool(C.CL_FALSE)
	if d.Normalized {
		norm = C.CL_TRUE
	}
	var code C.cl_int
	h := C.clCreateSampler(c.h, norm, am, fm, &code)
	if err := check("clCreateSampler", code); err != nil {
		return nil, err
	}
	return sampler{h}, nil
}

// SetArgSampler implements driver.SamplerKernel.
func (k kernel) SetArgSampler(i int, s driver.Sampler) error {
	ss, ok := s.(sampler)
	if !ok {
		return fmt.Errorf("clSetKernelArg: sampler of another backend (%T)", s)
	}
	return check("clSetKernelArg", C.dgen_set_arg_sampler(k.h, C.cl_uint(i), ss.h))
}

// box returns origin and size as OpenCL's origin and region arrays, one
// after the other.
func box(origin, size [3]int) [6]C.size_t {
	var b [6]C.size_t
	for i := range 3 {
		b[i], b[3+i] = C.size_t(origin[i]), C.size_t(size[i])
	}
	return b
}

func (q queue) rwImage(call string, read bool, img driver.Buffer, blocking bool, r driver.ImageRegion, p unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	m, err := asBuffer(call, img)
	if err != nil {
		return nil, err
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	b := box(r.Origin, r.Size)
	rd := C.int(0)
	if read {
		rd = 1
	}
	var ev C.cl_event
	evp := &ev
	bl := C.cl_bool(C.CL_FALSE)
	if blocking {
		bl, evp = C.CL_TRUE, nil
	}
	if err := queueError(q.h, call, C.dgen_rw_image(q.h, rd, m, bl, &b[0], C.size_t(r.RowPitch), C.size_t(r.SlicePitch), p, C.cl_uint(len(wl)), wp, evp)); err != nil {
		return nil, err
	}
	if blocking {
		return nil, nil
	}
	return event{ev}, nil
}

// ReadImage implements driver.ImageQueue with clEnqueueReadImage.
func (q queue) ReadImage(img driver.Buffer, blocking bool, r driver.ImageRegion, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.rwImage("clEnqueueReadImage", true, img, blocking, r, dst, wait)
}

// WriteImage implements driver.ImageQueue with clEnqueueWriteImage.
func (q queue) WriteImage(img driver.Buffer, blocking bool, r driver.ImageRegion, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.rwImage("clEnqueueWriteImage", false, img, blocking, r, src, wait)
}

// CopyImage implements driver.ImageQueue with clEnqueueCopyImage.
func (q queue) CopyImage(src, dst driver.Buffer, srcOrigin, dstOrigin, size [3]int, wait []driver.Event) (driver.Event, error) {
	s, err := asBuffer("clEnqueueCopyImage", src)
	if err != nil {
		return nil, err
	}
	d, err := asBuffer("clEnqueueCopyImage", dst)
	if err != nil {
		return nil, err
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	sb, db := box(srcOrigin, size), box(dstOrigin, size)
	var ev C.cl_event
	if err := queueError(q.h, "clEnqueueCopyImage", C.clEnqueueCopyImage(q.h, s, d, &sb[0], &db[0], &sb[3], C.cl_uint(len(wl)), wp, &ev)); err != nil {
		return nil, err
	}
	return event{ev}, nil
}

// FillImage implements driver.ImageQueue with clEnqueueFillImage.
func (q queue) FillImage(img driver.Buffer, color [16]byte, origin, size [3]int, wait []driver.Event) (driver.Event, error) {
	m, err := asBuffer("clEnqueueFillImage", img)
	if err != nil {
		return nil, err
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	b := box(origin, size)
	var ev C.cl_event
	if err := queueError(q.h, "clEnqueueFillImage", C.clEnqueueFillImage(q.h, m, unsafe.Pointer(&color[0]), &b[0], &b[3], C.cl_uint(len(wl)), wp, &ev)); err != nil {
		return nil, err
	}
	return event{ev}, nil
}
