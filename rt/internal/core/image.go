package core

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/trace"
)

// Images. An image is device memory with a pixel format that kernels read
// through image read functions (and samplers) and write with image write
// functions. One handle type, Image, holds any of the six image types of
// OpenCL C; its ImageDesc.Kind says which, and a kernel parameter of
// another type refuses it when the argument is set. Its memory is a Mem
// like a buffer's: freed once, counted, traced and, from an allocation
// site, reused in stream order.

// ImageDesc describes an image: its type, its pixel format, its size in
// pixels and what kernels may do with it.
type ImageDesc struct {
	// Kind is the OpenCL C image type that the image is (Image2D for
	// image2d_t, ...). It is required. A kernel parameter of another type
	// refuses the image: the launch returns an error wrapping
	// ErrInvalidArgument.
	Kind ImageKind
	// Order and Type are the channel order (OrderRGBA, ...) and channel
	// data type (UnormInt8, Float, ...). An image is created only in a
	// format that the device lists for its kind and access; another is an
	// error wrapping errors.ErrUnsupported that lists the formats the
	// device has.
	Order ChannelOrder
	Type  ChannelType
	// Width is the size of every kind; Height that of the 2D and 3D kinds,
	// Depth that of image3d_t, Layers the array size of image1d_array_t
	// and image2d_array_t. Sizes that a kind does not have are left 0.
	Width, Height, Depth, Layers int
	// Access is what kernels may do: ReadWrite (the zero Access), ReadOnly
	// or WriteOnly, as the OpenCL C qualifiers say it. A kernel parameter
	// whose qualifier the image does not allow is an error when the
	// argument is set. The host may read and write any image.
	Access Access
	// Buffer is the memory of an image1d_buffer_t, which lies over a
	// buffer: its pixels are the buffer's bytes. Set it to the rt.Buffer
	// itself.
	Buffer Memory
}

// Image is an image of any of OpenCL C's six image types (ImageDesc.Kind).
// The zero Image is no image; handles are copied freely and refer to the
// same image. Transfers (Read, Write) block until they are done, and their
// Context forms bound the wait for the commands before them; CopyTo and
// Fill return at once with the command's event.
type Image struct{ h *imageHandle }

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from ImageSite.Alloc). Later uses of the image, and a
// second Free, are errors wrapping ErrFreed.
func (i Image) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or
// an *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the
// box's size and the image's channel count, filled in place when its
// pixels are the image's (8-bit channels), else converted from 8- or
// 16-bit integer or FLOAT channels (floats in [0, 1] scale to the integer
// range). See ImageRegion for the box and the errors.
func (i Image) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(nil, q, true, r, dst, wait, 0)
}

// ReadContext is Read bounded by ctx: when ctx is done before the commands
// enqueued on q before it, and the events of wait, have completed, it
// returns an error wrapping ctx.Err(), leaves dst alone, and they run on.
// The copy itself, once they have completed, is not interrupted.
func (i Image) ReadContext(ctx context.Context, q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(ctx, q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns
// when it is done; src is as Read's dst.
func (i Image) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(nil, q, false, r, src, wait, 0)
}

// WriteContext is Write bounded by ctx, as ReadContext is Read: when ctx
// is done first, nothing is written to the image.
func (i Image) WriteContext(ctx context.Context, q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(ctx, q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format
// and may be of another kind (a 2D image into a slice of a 3D one), at
// dstOrigin. Within one image, boxes that share a pixel are an error
// wrapping ErrInvalidArgument. It returns at once with the command's event.
func (i Image) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would. It returns at once with the command's
// event.
func (i Image) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// imageKind returns the driver kind of ImageDesc.Kind.
func imageKind(kind ImageKind) (driver.ImageKind, error) {
	if _, err := imageKindNames.parse("image kind", kind.String()); err != nil {
		return 0, err
	}
	return driver.ImageKind(kind), nil
}

// imageHandle is one image as long as it is not freed: its memory, the
// Mem's generation when it was handed out (as a Buffer keeps it), and
// what the image is.
type imageHandle struct {
	m     *Mem
	gen   uint32
	desc  ImageDesc
	buf   *Mem // the memory of desc.Buffer, as it was when the image was made; nil for none
	kind  driver.ImageKind
	dims  [3]int // width, height or layers, depth or layers: the extent of a region
	px    int64  // bytes per pixel
	chans int    // channels per pixel, 0 for a packed format
	acc   driver.MemAccess
}

// mem returns the image's memory: freedMem once it has been freed, and nil
// for the zero image.
func (h *imageHandle) mem() *Mem {
	if h == nil {
		return nil
	}
	if h.m.gen.Load() != h.gen {
		return freedMem
	}
	return h.m
}

// Desc returns the description of the image; the zero ImageDesc for the
// zero image.
func (h *imageHandle) Desc() ImageDesc {
	if h == nil {
		return ImageDesc{}
	}
	return h.desc
}

// free gives the image's memory back; later uses are errors wrapping
// ErrFreed.
func (h *imageHandle) free() error {
	if h == nil {
		return fmt.Errorf("free image: %w: zero image", ErrInvalidArgument)
	}
	if h.m.ctxClosed() {
		return nil // Close released it
	}
	err := h.mem().Free()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFreed):
		return fmt.Errorf("free image: %w", ErrFreed)
	}
	return fmt.Errorf("free image: %w", err)
}

// checkImageDesc checks d and returns the handle that the image will have,
// without its memory.
func checkImageDesc(d ImageDesc) (*imageHandle, error) {
	k, err := imageKind(d.Kind)
	if err != nil {
		return nil, err
	}
	if _, err := accessNames.parse("access", d.Access.String()); err != nil {
		return nil, err
	}
	acc := driver.MemAccess(d.Access)
	px, chans, err := pixelSize(d.Order, d.Type)
	if err != nil {
		return nil, err
	}
	h := &imageHandle{desc: d, buf: d.buffer(), kind: k, px: px, chans: chans, acc: acc}
	w, ht, dp, l := d.Width, d.Height, d.Depth, d.Layers
	var extra []string
	switch k {
	case driver.Image1D, driver.Image1DBuffer:
		h.dims = [3]int{w, 1, 1}
		extra = nonzero(map[string]int{"Height": ht, "Depth": dp, "Layers": l})
	case driver.Image1DArray:
		h.dims = [3]int{w, l, 1}
		extra = nonzero(map[string]int{"Height": ht, "Depth": dp})
	case driver.Image2D:
		h.dims = [3]int{w, ht, 1}
		extra = nonzero(map[string]int{"Depth": dp, "Layers": l})
	case driver.Image2DArray:
		h.dims = [3]int{w, ht, l}
		extra = nonzero(map[string]int{"Depth": dp})
	case driver.Image3D:
		h.dims = [3]int{w, ht, dp}
		extra = nonzero(map[string]int{"Layers": l})
	}
	if len(extra) > 0 {
		return nil, fmt.Errorf("%w: %s has no %s", ErrInvalidArgument, k, strings.Join(extra, " or "))
	}
	n := px
	for i, d := range h.dims {
		if d <= 0 {
			return nil, fmt.Errorf("%w: %s of %s (%s): every size must be positive", ErrInvalidArgument, [3]string{"width", "height or layers", "depth or layers"}[i], k, sizeString(h.dims))
		}
		if n > (1<<62)/int64(d) {
			return nil, fmt.Errorf("%w: %s %s of %d-byte pixels overflows the sizes a device allocates", ErrTooLarge, sizeString(h.dims), k, px)
		}
		n *= int64(d)
	}
	if (k == driver.Image1DBuffer) != (h.buf != nil) {
		return nil, fmt.Errorf("%w: %s: ImageDesc.Buffer is set for an image1d_buffer_t and only for one", ErrInvalidArgument, k)
	}
	return h, nil
}

// buffer returns the memory of d.Buffer; nil for none, and for the zero
// Buffer.
func (d ImageDesc) buffer() *Mem {
	if d.Buffer == nil {
		return nil
	}
	return d.Buffer.mem()
}

// nonzero returns the names of the non-zero values of m, sorted.
func nonzero(m map[string]int) []string {
	var s []string
	for k, v := range m {
		if v != 0 {
			s = append(s, k)
		}
	}
	slices.Sort(s)
	return s
}

func sizeString(d [3]int) string { return fmt.Sprintf("%d×%d×%d", d[0], d[1], d[2]) }

// bytes returns the size of the image's pixels in bytes.
func (h *imageHandle) bytes() int64 {
	return int64(h.dims[0]) * int64(h.dims[1]) * int64(h.dims[2]) * h.px
}

// driverDesc returns the driver's description of the image.
func (h *imageHandle) driverDesc() driver.ImageDesc {
	d := h.desc
	dd := driver.ImageDesc{Kind: h.kind, Format: driver.ImageFormat{Order: d.Order.String(), Type: d.Type.String()},
		Width: d.Width, Height: d.Height, Depth: d.Depth, Layers: d.Layers, Access: h.acc}
	if m := h.buf; m != nil {
		dd.Buffer = m.drv
	}
	return dd
}

// imageState is a context's image machinery: the formats each device
// supports, the samplers made so far and the free lists of images from
// allocation sites. It is released by Close.
type imageState struct {
	mu       sync.Mutex
	formats  map[formatKey][]driver.ImageFormat
	samplers map[Sampler]*samplerObject
	pools    map[poolKey]*alloc.Allocator
}

type formatKey struct {
	kind driver.ImageKind
	acc  driver.MemAccess
}

// imageContext returns the context's driver as an ImageContext, or an
// error wrapping errors.ErrUnsupported.
func (c *Context) imageContext(op string) (driver.ImageContext, error) {
	ic, ok := c.drv.(driver.ImageContext)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the backend has no images", op, errors.ErrUnsupported)
	}
	return ic, nil
}

// checkFormat checks that the context's devices support h's format for
// its kind and access; the error lists what they support.
func (c *Context) checkFormat(ic driver.ImageContext, h *imageHandle) error {
	key := formatKey{h.kind, h.acc}
	c.images.mu.Lock()
	fs, ok := c.images.formats[key]
	c.images.mu.Unlock()
	if !ok {
		var err error
		if fs, err = ic.ImageFormats(h.kind, h.acc); err != nil {
			return fmt.Errorf("list image formats: %w", err)
		}
		c.images.mu.Lock()
		if c.images.formats == nil {
			c.images.formats = map[formatKey][]driver.ImageFormat{}
		}
		c.images.formats[key] = fs
		c.images.mu.Unlock()
	}
	want := driver.ImageFormat{Order: h.desc.Order.String(), Type: h.desc.Type.String()}
	if slices.Contains(fs, want) {
		return nil
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	slices.Sort(names)
	if len(names) == 0 {
		names = []string{"none"}
	}
	return fmt.Errorf("%w: format %s is not one that %s supports for %s %s images (it supports %s)",
		errors.ErrUnsupported, want, c.deviceLabel(), h.desc.Access, h.kind, strings.Join(names, ", "))
}

// newImageHandle checks d on c and returns the handle of the image to
// create.
func (c *Context) newImageHandle(op string, d ImageDesc) (driver.ImageContext, *imageHandle, error) {
	ic, err := c.imageContext(op)
	if err != nil {
		return nil, nil, err
	}
	h, err := checkImageDesc(d)
	if err == nil {
		err = c.checkImageSize(h)
	}
	if err == nil && h.buf != nil {
		err = c.checkImageBuffer(h)
	} else if max := c.maxAlloc(); err == nil && h.bytes() > max {
		err = fmt.Errorf("%w: %s %s of %d bytes: the device allocates at most %d bytes at once", ErrTooLarge, sizeString(h.dims), h.kind, h.bytes(), max)
	}
	if err == nil {
		err = c.checkFormat(ic, h)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return ic, h, nil
}

// checkImageSize checks h's size against the largest images that every
// device of c makes (driver.ImageLimits; 0 is no limit known), before the
// driver sees it.
func (c *Context) checkImageSize(h *imageHandle) error {
	d := h.desc
	for _, dev := range c.devices {
		lim := &dev.info.Images
		type side struct {
			what   string
			n, max int64
		}
		var sides []side
		switch h.kind {
		case driver.Image1D:
			sides = []side{{"width", int64(d.Width), lim.Width1D}}
		case driver.Image1DBuffer:
			sides = []side{{"width", int64(d.Width), lim.Buffer}}
		case driver.Image1DArray:
			sides = []side{{"width", int64(d.Width), lim.Width1D}, {"layers", int64(d.Layers), lim.Layers}}
		case driver.Image2D:
			sides = []side{{"width", int64(d.Width), lim.Width2D}, {"height", int64(d.Height), lim.Height2D}}
		case driver.Image2DArray:
			sides = []side{{"width", int64(d.Width), lim.Width2D}, {"height", int64(d.Height), lim.Height2D}, {"layers", int64(d.Layers), lim.Layers}}
		case driver.Image3D:
			sides = []side{{"width", int64(d.Width), lim.Width3D}, {"height", int64(d.Height), lim.Height3D}, {"depth", int64(d.Depth), lim.Depth3D}}
		}
		for _, s := range sides {
			if s.max > 0 && s.n > s.max {
				return fmt.Errorf("%w: %s %s: its %s, %d, is more than %q makes: %d", ErrInvalidArgument, h.kind, sizeString(h.dims), s.what, s.n, dev.Name, s.max)
			}
		}
	}
	return nil
}

// checkImageBuffer checks the buffer of an image1d_buffer_t.
func (c *Context) checkImageBuffer(h *imageHandle) error {
	m := h.buf
	if _, err := m.driverBuffer(); err != nil {
		return err
	}
	if err := c.sameContext("the image's buffer", m.ctx); err != nil {
		return err
	}
	if m.parent != nil {
		return fmt.Errorf("%w: an image cannot lie over a view", ErrInvalidArgument)
	}
	if m.pooled {
		// The allocator could hand the block out again while the image lives.
		return fmt.Errorf("%w: an image lies over a buffer from NewBuffer, not from an allocator", ErrInvalidArgument)
	}
	if m.size < h.bytes() {
		return fmt.Errorf("%w: the buffer has %d bytes, the image needs %d", ErrOutOfRange, m.size, h.bytes())
	}
	return nil
}

// NewImage creates an image as d describes, straight from the driver:
// Free releases it. A format the device lacks is an error wrapping
// errors.ErrUnsupported that lists the formats it has; a kind that
// ImageDesc does not name, and sizes that do not fit the kind, are errors
// wrapping ErrInvalidArgument.
func NewImage(c *Context, d ImageDesc) (Image, error) {
	op := "create " + imageOp(d.Kind)
	if err := c.enter(); err != nil {
		return Image{}, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	ic, h, err := c.newImageHandle(op, d)
	if err != nil {
		return Image{}, err
	}
	dev := c.devices[0]
	if h.buf == nil { // an image over a buffer lies in memory counted already
		if err := dev.charge(h.bytes()); err != nil {
			return Image{}, fmt.Errorf("%s %s: %w", op, sizeString(h.dims), err)
		}
	}
	drv, err := ic.NewImage(h.driverDesc())
	if err != nil {
		if h.buf == nil {
			dev.refund(h.bytes())
		}
		return Image{}, fmt.Errorf("%s %s %s on %s: %w", op, sizeString(h.dims), d.Order.String()+"/"+d.Type.String(), c.deviceLabel(), err)
	}
	c.counters.driverAllocs.Add(1)
	// An image1d_buffer_t is a view of its buffer: freeing the buffer ends it.
	h.m = &Mem{ctx: c, size: h.bytes(), release: releaseToDriver, parent: h.buf}
	h.m.setDriver(drv)
	c.live.add(h.m) // live.go
	c.traceMem(0, memTrace(h.m), true)
	return Image{h}, nil
}

// imageOp names an image of kind in an operation: its kind, or "image"
// when the kind is not one.
func imageOp(kind ImageKind) string {
	if _, err := imageKind(kind); err == nil {
		return kind.String()
	}
	return "image"
}

// Images from allocation sites. Each device has one allocator per kind,
// format, size and access of image, so that a tag's free block is always
// an image of the request's shape: the free list is keyed by tag, kind,
// format and dimensions, and the allocator's stream-ordered reuse,
// statistics hooks and Close serve images as they serve buffers.

// poolKey is the shape of images that one allocator holds, on one device.
type poolKey struct {
	dev             int
	kind            driver.ImageKind
	fmt             driver.ImageFormat
	w, h, d, layers int
	acc             driver.MemAccess
}

// imageDevice is the alloc.Device of one poolKey: it creates the images.
type imageDevice struct {
	devAlloc // Completed and Order
	ic       driver.ImageContext
	desc     driver.ImageDesc
}

// Alloc implements alloc.Device.
func (d *imageDevice) Alloc(size int64) (alloc.Block, error) {
	if err := d.dev.charge(size); err != nil {
		return nil, fmt.Errorf("create %s: %w", d.desc.Kind, err)
	}
	drv, err := d.ic.NewImage(d.desc)
	if err != nil {
		d.dev.refund(size)
		return nil, fmt.Errorf("create %s on %q: %w", d.desc.Kind, d.dev.Name, err)
	}
	d.ctx.counters.driverAllocs.Add(1)
	b := &block{drv: drv, size: size}
	b.mem.setDriver(drv)
	return b, nil
}

// MaxAlloc implements alloc.Device: the driver checks an image's size.
func (d *imageDevice) MaxAlloc() int64 { return 0 }

// imagePool returns the allocator of images of h's shape on q's device.
func (c *Context) imagePool(q *Queue, ic driver.ImageContext, h *imageHandle) (*alloc.Allocator, error) {
	dd := h.driverDesc()
	key := poolKey{dev: q.dev.index, kind: h.kind, fmt: dd.Format, w: dd.Width, h: dd.Height, d: dd.Depth, layers: dd.Layers, acc: h.acc}
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	if a := c.images.pools[key]; a != nil {
		return a, nil
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	cfg := c.settings.alloc
	cfg.BestFit = false // one shape per allocator: the tag is the key's last part
	cfg.Hook = allocTracer{q.dev.tr}
	a, err := alloc.New(&imageDevice{devAlloc: devAlloc{ctx: c, dev: q.dev}, ic: ic, desc: dd}, cfg)
	if err != nil {
		return nil, err
	}
	if c.images.pools == nil {
		c.images.pools = map[poolKey]*alloc.Allocator{}
	}
	c.images.pools[key] = a
	return a, nil
}

// ImageSite is a named allocation site of images, declared with
// //dgen:alloc as AllocSite is for buffers:
//
//	//dgen:alloc
//	var frames rt.ImageSite
//
// Its tag keys the allocator's free lists of images, and names the site in
// statistics and traces.
type ImageSite struct {
	// d is AllocSite's field: generated code registers the site as the
	// *AllocSite[Image] that a *ImageSite converts to.
	d atomic.Pointer[desc.AllocSite]
}

// site returns s as the AllocSite its registration is under.
func (s *ImageSite) site() *AllocSite[Image] { return (*AllocSite[Image])(s) }

// Tag returns the site's allocation tag, as AllocSite.Tag does.
func (s *ImageSite) Tag() uint32 { return s.site().Tag() }

// Alloc allocates an image as d describes under the site's tag on q's
// device. It is served from the free list of the tag and the image's
// kind, format, size and access when that holds an image, in stream order
// as AllocSite.Alloc serves buffers, and otherwise created. Free gives it
// back. Errors are as for NewImage; an image1d_buffer_t, which lies over a
// buffer, has no allocation site.
func (s *ImageSite) Alloc(q *Queue, d ImageDesc) (Image, error) {
	var zero Image
	op := "allocate " + imageOp(d.Kind)
	info, err := s.site().registration()
	if err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	if q == nil {
		return zero, fmt.Errorf("%s: %w: nil queue", op, ErrInvalidArgument)
	}
	if d.Kind == Image1DBuffer {
		return zero, fmt.Errorf("%s for %s: %w: an image over a buffer has no allocation site; use NewImage", op, info.Name, ErrInvalidArgument)
	}
	c := q.ctx
	if err := c.enter(); err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	ic, h, err := c.newImageHandle(op+" for "+info.Name, d)
	if err != nil {
		return zero, err
	}
	a, err := c.imagePool(q, ic, h)
	if err != nil {
		return zero, fmt.Errorf("%s for %s: %w", op, info.Name, err)
	}
	ah, err := a.AllocOn(q, alloc.Tag(info.Tag()), h.bytes())
	if err != nil {
		return zero, fmt.Errorf("%s %s for %s on %q: %w", op, sizeString(h.dims), info.Name, q.dev.Name, err)
	}
	blk, err := ah.Block()
	if err != nil {
		return zero, fmt.Errorf("%s for %s: %w", op, info.Name, err)
	}
	b := blk.(*block)
	m := &Mem{ctx: c, drv: b.drv, id: b.mem.id, handle: b.mem.handle, native: b.mem.native,
		size: h.bytes(), h: ah, pooled: true, release: releaseToAllocator} // a new Mem, as allocMem makes
	h.m, h.gen = m, m.gen.Load()
	return Image{h}, nil
}

// The pixels of images: formats, regions, transfers, copies, fills, and
// the conversion of Go's image types.

// ImageRegion is a box of an image's pixels and, for a transfer, the
// layout of the host memory on the other side.
type ImageRegion struct {
	// Origin is the first pixel (x, y, z), where y is the layer of an
	// image1d_array_t and z that of an image2d_array_t. Size is the box's
	// extent in the same axes; the zero Size means everything from Origin
	// to the image's end. A box outside the image is an error wrapping
	// ErrOutOfRange.
	Origin, Size [3]int
	// RowPitch and SlicePitch are the bytes from one row, and from one
	// slice (or layer), of the host memory to the next; 0 means rows and
	// slices packed without gaps. A pitch smaller than a row (or than the
	// rows of a slice) is an error wrapping ErrInvalidArgument. They are
	// ignored when the host side is one of Go's image types, whose Stride
	// is the pitch.
	RowPitch, SlicePitch int
}

// pixelSize returns the bytes and channels of a pixel of the format; 0
// channels for a packed type.
func pixelSize(order ChannelOrder, typ ChannelType) (int64, int, error) {
	if _, err := channelOrderNames.parse("channel order", order.String()); err != nil {
		return 0, 0, err
	}
	if _, err := channelTypeNames.parse("channel type", typ.String()); err != nil {
		return 0, 0, err
	}
	n, c := channelCounts[order], channelSizes[typ]
	if c.packed {
		return int64(c.bytes), 0, nil
	}
	return int64(n * c.bytes), n, nil
}

// box resolves r against h: the box in pixels, checked to lie in the
// image.
func (h *imageHandle) box(r ImageRegion) ([3]int, [3]int, error) {
	o, s := r.Origin, r.Size
	if s == [3]int{} {
		for i := range s {
			s[i] = h.dims[i] - o[i]
		}
	}
	for i := range 3 {
		if o[i] < 0 || s[i] <= 0 || o[i] > h.dims[i] || s[i] > h.dims[i]-o[i] {
			return o, s, fmt.Errorf("%w: box %s at (%d, %d, %d) of a %s %s", ErrOutOfRange, sizeString(s), o[0], o[1], o[2], sizeString(h.dims), h.kind)
		}
	}
	return o, s, nil
}

// layout returns the pitches of host memory for a box of size s, checked
// against the row, and the bytes the box spans in it.
func (h *imageHandle) layout(s [3]int, row, slice int) (int64, int64, int64, error) {
	rowBytes := int64(s[0]) * h.px
	rp, sp := int64(row), int64(slice)
	if rp == 0 {
		rp = rowBytes
	}
	if rp < rowBytes {
		return 0, 0, 0, fmt.Errorf("%w: row pitch %d is smaller than a row of %d pixels of %d bytes", ErrInvalidArgument, row, s[0], h.px)
	}
	// No host memory spans more than 2^62 bytes: pitches that would are
	// out of range, before their products overflow.
	const most = 1 << 62
	if rp > most/int64(s[1]) {
		return 0, 0, 0, fmt.Errorf("%w: %d rows of pitch %d overflow any host memory", ErrOutOfRange, s[1], rp)
	}
	if sp == 0 {
		sp = rp * int64(s[1])
	}
	if sp < rp*int64(s[1]) {
		return 0, 0, 0, fmt.Errorf("%w: slice pitch %d is smaller than %d rows of pitch %d", ErrInvalidArgument, slice, s[1], rp)
	}
	if sp > most/int64(s[2]) {
		return 0, 0, 0, fmt.Errorf("%w: %d slices of pitch %d overflow any host memory", ErrOutOfRange, s[2], sp)
	}
	span := int64(s[2]-1)*sp + int64(s[1]-1)*rp + rowBytes
	return rp, sp, span, nil
}

// checkUse checks that the image may be used on q and returns its memory,
// with a use of it registered (Mem.useAll) that the caller ends with
// m.doneAll() once the driver call returns, so that a Free that races
// with the call does not release the image under it.
func (h *imageHandle) checkUse(q *Queue, what string) (*Mem, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: zero %s", ErrInvalidArgument, what)
	}
	m := h.mem()
	if _, err := m.driverBuffer(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, unwrapBuffer(err))
	}
	if q == nil {
		return nil, fmt.Errorf("%w: nil queue", ErrInvalidArgument)
	}
	if err := q.ctx.sameContext("the "+what, m.ctx); err != nil {
		return nil, err
	}
	if !m.useAll() {
		return nil, fmt.Errorf("%s: %w", what, ErrFreed)
	}
	return m, nil
}

// unwrapBuffer drops the "buffer: " of Mem's errors, which name a buffer.
func unwrapBuffer(err error) error {
	type wrapped interface{ Unwrap() error }
	if w, ok := err.(wrapped); ok && w.Unwrap() != nil {
		return w.Unwrap()
	}
	return err
}

// hostMem is host memory that a transfer reads or writes: a pointer, its
// length in bytes, and the pitches of its rows and slices when they are
// its own (Go's image types).
type hostMem struct {
	p         unsafe.Pointer
	n         int64
	row, sl   int
	keep      any          // what p points into, alive until the transfer ends
	convertIn func([]byte) // for a read: converts the bytes read into the Go image
	conv      []byte       // the converted pixels, when there are
}

// sliceMem returns the memory of v, a slice of plain data.
func sliceMem(v any) (hostMem, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return hostMem{}, fmt.Errorf("%w: pixels of type %T: want a slice of plain data or *image.RGBA, *image.Gray, *image.Gray16, *image.RGBA64", ErrInvalidArgument, v)
	}
	if err := checkPlain(rv.Type().Elem()); err != nil {
		return hostMem{}, fmt.Errorf("pixels of type %T: %w", v, err)
	}
	return hostMem{p: rv.UnsafePointer(), n: int64(rv.Len()) * int64(rv.Type().Elem().Size()), keep: v}, nil
}

// transfer reads (into host) or writes (from host) the box r of the image,
// blocking until it is done, bounded by ctx where it is not nil. skip is
// as for beginTask.
func (h *imageHandle) transfer(ctx context.Context, q *Queue, read bool, r ImageRegion, host any, wait []*Event, skip int) error {
	op := "write " + h.kind.String()
	kind := trace.Write
	if read {
		op, kind = "read "+h.kind.String(), trace.Read
	}
	m, err := h.checkUse(q, "image")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer m.doneAll()
	o, s, err := h.box(r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	hm, err := h.hostFor(host, read, s)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if hm.row != 0 {
		r.RowPitch, r.SlicePitch = hm.row, hm.sl
	}
	rp, sp, span, err := h.layout(s, r.RowPitch, r.SlicePitch)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if hm.n < span {
		return fmt.Errorf("%s: %w: the host memory has %d bytes, the box %s needs %d", op, ErrOutOfRange, hm.n, sizeString(s), span)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return fmt.Errorf("%s: %w", op, errNoImages)
	}
	if ctx != nil { // a Context form
		if err := q.waitBefore(ctx, op, wait); err != nil {
			return err
		}
	}
	dr := driver.ImageRegion{Origin: o, Size: s, RowPitch: rp, SlicePitch: sp}
	switch h.kind {
	case driver.Image1D, driver.Image1DBuffer, driver.Image2D:
		dr.SlicePitch = 0
	case driver.Image1DArray:
		dr.SlicePitch = rp // the step between layers, which are its rows
	}
	if err := q.imageTransfer(op, kind, func(dw []driver.Event) error {
		var err error
		if read {
			_, err = iq.ReadImage(m.drv, true, dr, hm.p, dw)
		} else {
			_, err = iq.WriteImage(m.drv, true, dr, hm.p, dw)
		}
		return err
	}, wait, skip+1); err != nil {
		return err
	}
	if hm.convertIn != nil {
		hm.convertIn(hm.conv)
	}
	return nil
}

// imageTransfer runs the blocking transfer do on q after wait; skip is as
// for beginTask.
func (q *Queue) imageTransfer(op string, kind trace.CmdKind, do func([]driver.Event) error, wait []*Event, skip int) error {
	if r := q.recorder(); r != nil {
		return r.refuse(op, "graphs do not record this command")
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer q.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	tk := q.beginTask(kind, op, skip+1, wait)
	n := q.pts.enq.Load() // a blocking transfer completes what was enqueued before it
	err = do(dw)
	tk.EndRelease()
	if err != nil {
		return q.ctx.failed(q, fmt.Errorf("%s on %q: %w", op, q.dev.Name, err))
	}
	q.pts.complete(n)
	return nil
}

var errNoImages = fmt.Errorf("%w: the backend's queues have no image commands", errors.ErrUnsupported)

// copyTo copies the box r of h to dst at dstOrigin. skip is as for
// beginTask.
func (h *imageHandle) copyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait []*Event, skip int) (*Event, error) {
	op := "copy " + h.kind.String()
	m, err := h.checkUse(q, "source image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer m.doneAll()
	dh := dst.h
	dm, err := dh.checkUse(q, "destination image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer dm.doneAll()
	o, s, err := h.box(r)
	if err == nil {
		_, _, err = dh.box(ImageRegion{Origin: dstOrigin, Size: s})
	}
	if err == nil && (dh.desc.Order != h.desc.Order || dh.desc.Type != h.desc.Type) {
		err = fmt.Errorf("%w: the images' formats differ (%s/%s, %s/%s)", ErrInvalidArgument, h.desc.Order, h.desc.Type, dh.desc.Order, dh.desc.Type)
	}
	if err == nil && m == dm && boxesMeet(o, dstOrigin, s) {
		// As for buffers (checkOverlap): OpenCL's CL_MEM_COPY_OVERLAP
		// wraps no sentinel, and CUDA's copy does not look.
		err = fmt.Errorf("%w: the source box at %v and the destination box at %v, each of %v pixels, overlap in one image: copy between boxes that share no pixel", ErrInvalidArgument, o, dstOrigin, s)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, errNoImages)
	}
	ev, err := q.command(op, trace.Copy, func(dw []driver.Event, _ bool) (driver.Event, error) {
		return iq.CopyImage(m.drv, dm.drv, o, dstOrigin, s, dw)
	}, wait, true, skip+1)
	if err == nil {
		q.record(m, dm)
	}
	return ev, err
}

// boxesMeet reports whether the boxes of size s at a and at b share a
// pixel.
func boxesMeet(a, b, s [3]int) bool {
	for i := range 3 {
		if s[i] == 0 || a[i] >= b[i]+s[i] || b[i] >= a[i]+s[i] {
			return false
		}
	}
	return true
}

// fill sets the box r of h to color. skip is as for beginTask.
func (h *imageHandle) fill(q *Queue, r ImageRegion, color [4]float64, wait []*Event, skip int) (*Event, error) {
	op := "fill " + h.kind.String()
	m, err := h.checkUse(q, "image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer m.doneAll()
	o, s, err := h.box(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, errNoImages)
	}
	var c [16]byte
	for i, v := range color {
		var bits uint32
		switch h.desc.Type {
		case SignedInt8, SignedInt16, SignedInt32:
			bits = uint32(int32(v))
		case UnsignedInt8, UnsignedInt16, UnsignedInt32:
			bits = uint32(v)
		default:
			bits = math.Float32bits(float32(v))
		}
		binary.NativeEndian.PutUint32(c[4*i:], bits)
	}
	ev, err := q.command(op, trace.Fill, func(dw []driver.Event, _ bool) (driver.Event, error) {
		return iq.FillImage(m.drv, c, o, s, dw)
	}, wait, true, skip+1)
	if err == nil {
		q.record(m)
	}
	return ev, err
}

// goImage describes the pixels of one of Go's image types: the bytes from
// the box's first pixel, the stride, the channels and the bytes of a
// channel (16-bit channels are big-endian).
type goImage struct {
	pix    []byte
	stride int
	chans  int
	depth  int
	bounds image.Rectangle
}

func asGoImage(v any) (goImage, bool) {
	switch m := v.(type) {
	case *image.RGBA:
		return goImage{m.Pix, m.Stride, 4, 1, m.Rect}, true
	case *image.Gray:
		return goImage{m.Pix, m.Stride, 1, 1, m.Rect}, true
	case *image.RGBA64:
		return goImage{m.Pix, m.Stride, 4, 2, m.Rect}, true
	case *image.Gray16:
		return goImage{m.Pix, m.Stride, 1, 2, m.Rect}, true
	}
	return goImage{}, false
}

// hostFor returns the host memory of a transfer of a box of size s from
// or to host: a slice as it is, or a Go image, used in place when its
// pixels are the image's, else converted.
func (h *imageHandle) hostFor(host any, read bool, s [3]int) (hostMem, error) {
	g, ok := asGoImage(host)
	if !ok {
		return sliceMem(host)
	}
	if s[2] != 1 || g.bounds.Dx() < s[0] || g.bounds.Dy() < s[1] {
		return hostMem{}, fmt.Errorf("%w: a %dx%d %T holds no box %s", ErrOutOfRange, g.bounds.Dx(), g.bounds.Dy(), host, sizeString(s))
	}
	if h.chans != g.chans {
		return hostMem{}, fmt.Errorf("%w: %T has %d channels, a pixel of %s/%s %d", ErrInvalidArgument, host, g.chans, h.desc.Order, h.desc.Type, h.chans)
	}
	dev, ok := deviceChannels[h.desc.Type]
	if !ok {
		return hostMem{}, fmt.Errorf("%w: %T converts to and from 8- and 16-bit integer and FLOAT channels, not %s", ErrInvalidArgument, host, h.desc.Type)
	}
	if dev.size == 1 && g.depth == 1 {
		// The pixels are the image's: no copy.
		n := len(g.pix)
		return hostMem{p: unsafe.Pointer(unsafe.SliceData(g.pix)), n: int64(n), row: g.stride, keep: host}, nil
	}
	rowBytes := s[0] * int(h.px)
	conv := make([]byte, rowBytes*s[1])
	hm := hostMem{p: unsafe.Pointer(unsafe.SliceData(conv)), n: int64(len(conv)), row: rowBytes, conv: conv}
	samples := s[0] * g.chans
	if read {
		hm.convertIn = func(b []byte) {
			for y := range s[1] {
				fromDevice(g.pix[y*g.stride:], g.depth, b[y*rowBytes:], dev, samples)
			}
		}
		return hm, nil
	}
	for y := range s[1] {
		toDevice(conv[y*rowBytes:], dev, g.pix[y*g.stride:], g.depth, samples)
	}
	return hm, nil
}

// channelKind is how a device channel type is stored: size bytes, as an
// integer scaled to its full range (norm) or not, or a float32.
type channelKind struct {
	size  int
	float bool
}

var deviceChannels = map[ChannelType]channelKind{
	UnormInt8: {1, false}, UnsignedInt8: {1, false},
	UnormInt16: {2, false}, UnsignedInt16: {2, false},
	Float: {4, true},
}

// toDevice converts n samples of depth bytes (big-endian) from src into
// the device's channels in dst: an integer to the other width by scaling
// its range, or to float in [0, 1].
func toDevice(dst []byte, dev channelKind, src []byte, depth, n int) {
	for i := range n {
		var v uint32 // 16-bit
		if depth == 1 {
			v = uint32(src[i]) * 0x101
		} else {
			v = uint32(src[2*i])<<8 | uint32(src[2*i+1])
		}
		switch {
		case dev.float:
			binary.NativeEndian.PutUint32(dst[4*i:], math.Float32bits(float32(v)/65535))
		case dev.size == 1:
			dst[i] = byte((v*255 + 32767) / 65535)
		default:
			binary.NativeEndian.PutUint16(dst[2*i:], uint16(v))
		}
	}
}

// fromDevice is the inverse of toDevice, rounding and clamping floats.
func fromDevice(dst []byte, depth int, src []byte, dev channelKind, n int) {
	for i := range n {
		var v uint32 // 16-bit
		switch {
		case dev.float:
			f := math.Float32frombits(binary.NativeEndian.Uint32(src[4*i:]))
			v = uint32(math.Round(float64(min(max(f, 0), 1)) * 65535))
		case dev.size == 1:
			v = uint32(src[i]) * 0x101
		default:
			v = uint32(binary.NativeEndian.Uint16(src[2*i:]))
		}
		if depth == 1 {
			dst[i] = byte((v*255 + 32767) / 65535)
		} else {
			dst[2*i], dst[2*i+1] = byte(v>>8), byte(v)
		}
	}
}
