package rt

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

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

// core returns d as the core describes an image.
func (d ImageDesc) core() core.ImageDesc {
	c := core.ImageDesc{Kind: core.ImageKind(d.Kind), Order: core.ChannelOrder(d.Order), Type: core.ChannelType(d.Type),
		Width: d.Width, Height: d.Height, Depth: d.Depth, Layers: d.Layers, Access: core.Access(d.Access)}
	if d.Buffer != nil {
		c.Buffer, c.BufferValue = d.Buffer.memory(), d.Buffer
	}
	return c
}

// imageDesc returns the ImageDesc that c describes.
func imageDesc(c core.ImageDesc) ImageDesc {
	d := ImageDesc{Kind: ImageKind(c.Kind), Order: ChannelOrder(c.Order), Type: ChannelType(c.Type),
		Width: c.Width, Height: c.Height, Depth: c.Depth, Layers: c.Layers, Access: Access(c.Access)}
	d.Buffer, _ = c.BufferValue.(Memory)
	return d
}

// Image is an image of any of OpenCL C's six image types (ImageDesc.Kind).
// The zero Image is no image; handles are copied freely and refer to the
// same image. Transfers (Read, Write) block until they are done, and their
// Context forms bound the wait for the commands before them; CopyTo and
// Fill return at once with the command's event.
type Image core.Image

// core returns i as the core's image.
func (i Image) core() core.Image { return core.Image(i) }

// NewImage creates an image as d describes, straight from the driver:
// Free releases it. A format the device lacks is an error wrapping
// errors.ErrUnsupported that lists the formats it has; a kind that
// ImageDesc does not name, and sizes that do not fit the kind, are errors
// wrapping ErrInvalidArgument.
func NewImage(c *Context, d ImageDesc) (Image, error) {
	i, err := core.NewImage(c.core(), d.core())
	return Image(i), err
}

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image) Desc() ImageDesc { return imageDesc(i.core().Desc()) }

// Free gives the image's memory back (to the allocation site's free list
// for an image from ImageSite.Alloc). Later uses of the image, and a
// second Free, are errors wrapping ErrFreed.
func (i Image) Free() error { return i.core().Free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or
// an *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the
// box's size and the image's channel count, filled in place when its
// pixels are the image's (8-bit channels), else converted from 8- or
// 16-bit integer or FLOAT channels (floats in [0, 1] scale to the integer
// range). See ImageRegion for the box and the errors.
func (i Image) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	var w core.WaitList
	return i.core().Read(q.core(), core.ImageRegion(r), dst, waits(&w, wait)...)
}

// Write copies src into the box r of the image after wait and returns
// when it is done; src is as Read's dst.
func (i Image) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	var w core.WaitList
	return i.core().Write(q.core(), core.ImageRegion(r), src, waits(&w, wait)...)
}

// ReadContext is Read bounded by ctx: when ctx is done before the commands
// enqueued on q before it, and the events of wait, have completed, it
// returns an error wrapping ctx.Err(), leaves dst alone, and they run on.
// The copy itself, once they have completed, is not interrupted.
func (i Image) ReadContext(ctx context.Context, q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	var w core.WaitList
	return i.core().ReadContext(ctx, q.core(), core.ImageRegion(r), dst, waits(&w, wait)...)
}

// WriteContext is Write bounded by ctx, as ReadContext is Read: when ctx
// is done first, nothing is written.
func (i Image) WriteContext(ctx context.Context, q *Queue, r ImageRegion, src any, wait ...*Event) error {
	var w core.WaitList
	return i.core().WriteContext(ctx, q.core(), core.ImageRegion(r), src, waits(&w, wait)...)
}

// CopyTo copies the box r of the image to dst, which has the same format
// and may be of another kind (a 2D image into a slice of a 3D one), at
// dstOrigin. Within one image, boxes that share a pixel are an error
// wrapping ErrInvalidArgument. It returns at once with the command's event.
func (i Image) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := i.core().CopyTo(q.core(), dst.core(), core.ImageRegion(r), dstOrigin, waits(&w, wait)...)
	return (*Event)(e), err
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would. It returns at once with the command's
// event.
func (i Image) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := i.core().Fill(q.core(), core.ImageRegion(r), color, waits(&w, wait)...)
	return (*Event)(e), err
}

// ImageSite is a named allocation site of images, declared with
// //dgen:alloc as AllocSite is for buffers:
//
//	//dgen:alloc
//	var frames rt.ImageSite
//
// Its tag keys the allocator's free lists of images, and names the site in
// statistics and traces.
type ImageSite core.ImageSite

// Alloc allocates an image as d describes under the site's tag on q's
// device. It is served from the free list of the tag and the image's
// kind, format, size and access when that holds an image, in stream order
// as AllocSite.Alloc serves buffers, and otherwise created. Free gives it
// back. Errors are as for NewImage; an image1d_buffer_t, which lies over a
// buffer, has no allocation site.
func (s *ImageSite) Alloc(q *Queue, d ImageDesc) (Image, error) {
	i, err := (*core.ImageSite)(s).Alloc(q.core(), d.core())
	return Image(i), err
}

// Tag returns the site's allocation tag, as stats.Alloc.Tag and traces
// name it, or 0 if the site is not registered.
func (s *ImageSite) Tag() uint32 { return (*core.ImageSite)(s).Tag() }

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
