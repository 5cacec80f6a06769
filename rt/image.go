package rt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
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
//
// Kind is the OpenCL C image type that the image is: "image1d_t",
// "image1d_buffer_t", "image1d_array_t", "image2d_t", "image2d_array_t"
// or "image3d_t". It is required. A kernel parameter of another type
// refuses the image: the launch returns an error wrapping
// ErrInvalidArgument.
//
// Order and Type are the channel order and channel data type as OpenCL
// names them without the CL_ prefix: Order "R", "RG", "RGBA", "BGRA",
// "LUMINANCE", ...; Type "UNORM_INT8", "UNSIGNED_INT16", "FLOAT",
// "HALF_FLOAT", ... An image is created only in a format that the device
// lists for its kind and access; another is an error wrapping
// errors.ErrUnsupported that lists the formats the device has.
//
// Width is the size of every kind; Height that of the 2D and 3D kinds,
// Depth that of image3d_t, Layers the array size of image1d_array_t and
// image2d_array_t. Sizes that a kind does not have are left 0.
//
// Access is what kernels may do: "read_write" (also when empty),
// "read_only" or "write_only", as the OpenCL C qualifiers say it. A
// kernel parameter whose qualifier the image does not allow is an error
// when the argument is set. The host may read and write any image.
//
// Buffer is the memory of an image1d_buffer_t, which lies over a buffer:
// its pixels are the buffer's bytes (Buffer.Mem).
type ImageDesc struct {
	Kind                         string
	Order, Type                  string
	Width, Height, Depth, Layers int
	Access                       string
	Buffer                       *Mem
}

// Image is an image of any of OpenCL C's six image types (ImageDesc.Kind).
// The zero Image is no image; handles are copied freely and refer to the
// same image. Transfers (Read, Write) block until they are done; CopyTo
// and Fill return at once with the command's event.
type Image struct{ h *imageHandle }

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format
// and may be of another kind (a 2D image into a slice of a 3D one), at
// dstOrigin.
func (i Image) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// imageKinds maps ImageDesc.Kind to the driver's kinds.
var imageKinds = map[string]driver.ImageKind{
	"image1d_t": driver.Image1D, "image1d_buffer_t": driver.Image1DBuffer, "image1d_array_t": driver.Image1DArray,
	"image2d_t": driver.Image2D, "image2d_array_t": driver.Image2DArray, "image3d_t": driver.Image3D,
}

// imageKind returns the driver kind that ImageDesc.Kind names.
func imageKind(kind string) (driver.ImageKind, error) {
	if k, ok := imageKinds[kind]; ok {
		return k, nil
	}
	return 0, fmt.Errorf("%w: image kind %q: want image1d_t, image1d_buffer_t, image1d_array_t, image2d_t, image2d_array_t or image3d_t", ErrInvalidArgument, kind)
}

// imageHandle is one image as long as it is not freed: its memory, the
// Mem's generation when it was handed out (as a Buffer keeps it), and
// what the image is.
type imageHandle struct {
	m     *Mem
	gen   uint32
	desc  ImageDesc
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
	err := h.mem().Free()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFreed):
		return fmt.Errorf("free image: %w", ErrFreed)
	}
	return fmt.Errorf("free image: %w", err)
}

// accesses are the values of ImageDesc.Access.
var accesses = map[string]driver.MemAccess{"": driver.ReadWrite, "read_write": driver.ReadWrite, "read_only": driver.ReadOnly, "write_only": driver.WriteOnly}

var accessNames = [...]string{driver.ReadWrite: "read_write", driver.ReadOnly: "read_only", driver.WriteOnly: "write_only"}

// describe checks d and returns the handle that the image will have,
// without its memory.
func describe(d ImageDesc) (*imageHandle, error) {
	k, err := imageKind(d.Kind)
	if err != nil {
		return nil, err
	}
	acc, ok := accesses[d.Access]
	if !ok {
		return nil, fmt.Errorf("%w: access %q: want read_write, read_only or write_only", ErrInvalidArgument, d.Access)
	}
	d.Access = accessNames[acc]
	px, chans, err := pixelSize(d.Order, d.Type)
	if err != nil {
		return nil, err
	}
	h := &imageHandle{desc: d, kind: k, px: px, chans: chans, acc: acc}
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
	for i, n := range h.dims {
		if n <= 0 {
			return nil, fmt.Errorf("%w: %s of %s (%s): every size must be positive", ErrInvalidArgument, [3]string{"width", "height or layers", "depth or layers"}[i], k, sizeString(h.dims))
		}
	}
	if (k == driver.Image1DBuffer) != (d.Buffer != nil) {
		return nil, fmt.Errorf("%w: %s: ImageDesc.Buffer is set for an image1d_buffer_t and only for one", ErrInvalidArgument, k)
	}
	return h, nil
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
	dd := driver.ImageDesc{Kind: h.kind, Format: driver.ImageFormat{Order: d.Order, Type: d.Type},
		Width: d.Width, Height: d.Height, Depth: d.Depth, Layers: d.Layers, Access: h.acc}
	if d.Buffer != nil {
		dd.Buffer = d.Buffer.drv
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
	want := driver.ImageFormat{Order: h.desc.Order, Type: h.desc.Type}
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
	h, err := describe(d)
	if err == nil && d.Buffer != nil {
		err = c.checkImageBuffer(h)
	}
	if err == nil {
		err = c.checkFormat(ic, h)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return ic, h, nil
}

// checkImageBuffer checks the buffer of an image1d_buffer_t.
func (c *Context) checkImageBuffer(h *imageHandle) error {
	m := h.desc.Buffer
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
	drv, err := ic.NewImage(h.driverDesc())
	if err != nil {
		return Image{}, fmt.Errorf("%s %s %s on %s: %w", op, sizeString(h.dims), d.Order+"/"+d.Type, c.deviceLabel(), err)
	}
	c.driverAllocs.Add(1)
	// An image1d_buffer_t is a view of its buffer: freeing the buffer ends it.
	h.m = &Mem{ctx: c, drv: drv, size: h.bytes(), release: releaseToDriver, id: bufferIDs.Add(1), parent: d.Buffer}
	c.traceMem(0, memTrace(h.m), true)
	return Image{h}, nil
}

// imageOp names an image of kind in an operation: its kind, or "image"
// when the kind is not one.
func imageOp(kind string) string {
	if _, ok := imageKinds[kind]; ok {
		return kind
	}
	return "image"
}

// closeImages releases the samplers and the images held for allocation
// sites. Called by Close with c.closed set, after the queues have drained.
func (c *Context) closeImages() []error {
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	var errs []error
	for _, a := range c.images.pools {
		if err := a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close context: images: %w", err))
		}
	}
	for _, err := range c.releaseSamplers() {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	c.images.pools = nil
	return errs
}
