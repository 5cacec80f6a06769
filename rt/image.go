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
// functions. The six handle types are the six image types of OpenCL C;
// a kernel spec's field of one of them binds a parameter of that type.
// Their memory is a Mem like a buffer's: freed once, counted, traced and,
// from an allocation site, reused in stream order.

// ImageDesc describes an image: its pixel format, its size in pixels and
// what kernels may do with it.
//
// Order and Type are the channel order and channel data type as OpenCL
// names them without the CL_ prefix: Order "R", "RG", "RGBA", "BGRA",
// "LUMINANCE", ...; Type "UNORM_INT8", "UNSIGNED_INT16", "FLOAT",
// "HALF_FLOAT", ... An image is created only in a format that the device
// lists for its kind and access; another is an error wrapping
// errors.ErrUnsupported that lists the formats the device has.
//
// Width is the size of every kind; Height that of the 2D and 3D kinds,
// Depth that of Image3D, Layers the array size of Image1DArray and
// Image2DArray. Sizes that a kind does not have are left 0.
//
// Access is what kernels may do: "read_write" (also when empty),
// "read_only" or "write_only", as the OpenCL C qualifiers say it. A
// kernel parameter whose qualifier the image does not allow is an error
// when the argument is set. The host may read and write any image.
//
// Buffer is the memory of an Image1DBuffer, which lies over a buffer: its
// pixels are the buffer's bytes (Buffer.Mem).
type ImageDesc struct {
	Order, Type                  string
	Width, Height, Depth, Layers int
	Access                       string
	Buffer                       *Mem
}

// Image is any of the six image types, for the operations that take an
// image of another kind (CopyTo).
type Image interface {
	// Desc returns the image's description; the zero ImageDesc for the zero
	// image.
	Desc() ImageDesc
	handle() *imageHandle
}

// Image1D is an OpenCL C image1d_t. The zero Image1D is no image; handles
// are copied freely and refer to the same image.
type Image1D struct{ h *imageHandle }

// Image1DBuffer is an OpenCL C image1d_buffer_t: a 1D image over the
// memory of a buffer (ImageDesc.Buffer).
type Image1DBuffer struct{ h *imageHandle }

// Image1DArray is an OpenCL C image1d_array_t: Layers 1D images of one
// width.
type Image1DArray struct{ h *imageHandle }

// Image2D is an OpenCL C image2d_t.
type Image2D struct{ h *imageHandle }

// Image2DArray is an OpenCL C image2d_array_t: Layers 2D images of one
// size.
type Image2DArray struct{ h *imageHandle }

// Image3D is an OpenCL C image3d_t.
type Image3D struct{ h *imageHandle }

// imageKinds lists the image handle types, for NewImage and AllocImage.
type imageKinds interface {
	Image1D | Image1DBuffer | Image1DArray | Image2D | Image2DArray | Image3D
	Image
}

func (i Image1D) handle() *imageHandle       { return i.h }
func (i Image1DBuffer) handle() *imageHandle { return i.h }
func (i Image1DArray) handle() *imageHandle  { return i.h }
func (i Image2D) handle() *imageHandle       { return i.h }
func (i Image2DArray) handle() *imageHandle  { return i.h }
func (i Image3D) handle() *imageHandle       { return i.h }

// kindOf returns the driver kind of the handle type I.
func kindOf[I imageKinds]() driver.ImageKind {
	var z I
	switch any(z).(type) {
	case Image1D:
		return driver.Image1D
	case Image1DBuffer:
		return driver.Image1DBuffer
	case Image1DArray:
		return driver.Image1DArray
	case Image2D:
		return driver.Image2D
	case Image2DArray:
		return driver.Image2DArray
	}
	return driver.Image3D
}

// wrap returns h as the handle type I.
func wrap[I imageKinds](h *imageHandle) I {
	var v any
	switch any(*new(I)).(type) {
	case Image1D:
		v = Image1D{h}
	case Image1DBuffer:
		v = Image1DBuffer{h}
	case Image1DArray:
		v = Image1DArray{h}
	case Image2D:
		v = Image2D{h}
	case Image2DArray:
		v = Image2DArray{h}
	default:
		v = Image3D{h}
	}
	return v.(I)
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

// describe checks d for an image of kind k and returns the handle that the
// image will have, without its memory.
func describe(k driver.ImageKind, d ImageDesc) (*imageHandle, error) {
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

// newImageHandle checks d for kind k on c and returns the handle of the
// image to create.
func (c *Context) newImageHandle(op string, k driver.ImageKind, d ImageDesc) (driver.ImageContext, *imageHandle, error) {
	ic, err := c.imageContext(op)
	if err != nil {
		return nil, nil, err
	}
	h, err := describe(k, d)
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

// checkImageBuffer checks the buffer of an Image1DBuffer.
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

// NewImage creates an image of the kind I (Image2D, ...) as d describes,
// straight from the driver: Free releases it. A format the device lacks is
// an error wrapping errors.ErrUnsupported that lists the formats it has;
// sizes that do not fit the kind are errors wrapping ErrInvalidArgument.
func NewImage[I imageKinds](c *Context, d ImageDesc) (I, error) {
	var zero I
	k := kindOf[I]()
	op := "create " + k.String()
	if err := c.enter(); err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	ic, h, err := c.newImageHandle(op, k, d)
	if err != nil {
		return zero, err
	}
	drv, err := ic.NewImage(h.driverDesc())
	if err != nil {
		return zero, fmt.Errorf("%s %s %s on %s: %w", op, sizeString(h.dims), d.Order+"/"+d.Type, c.deviceLabel(), err)
	}
	c.driverAllocs.Add(1)
	// An Image1DBuffer is a view of its buffer: freeing the buffer ends it.
	h.m = &Mem{ctx: c, drv: drv, size: h.bytes(), release: releaseToDriver, id: bufferIDs.Add(1), parent: d.Buffer}
	c.traceMem(0, memTrace(h.m), true)
	return wrap[I](h), nil
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
