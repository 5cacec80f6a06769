package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// ImageDesc describes an image: its type, its pixel format, its size in
// pixels and what kernels may do with it.
//
// Kind is the OpenCL C image type that the image is (Image2D for
// image2d_t, ...). It is required. A kernel parameter of another type
// refuses the image: the launch returns an error wrapping
// ErrInvalidArgument.
//
// Order and Type are the channel order (OrderRGBA, ...) and channel data
// type (UnormInt8, Float, ...). An image is created only in a format that
// the device lists for its kind and access; another is an error wrapping
// errors.ErrUnsupported that lists the formats the device has.
//
// Width is the size of every kind; Height that of the 2D and 3D kinds,
// Depth that of image3d_t, Layers the array size of image1d_array_t and
// image2d_array_t. Sizes that a kind does not have are left 0.
//
// Access is what kernels may do: ReadWrite (the zero Access), ReadOnly or
// WriteOnly, as the OpenCL C qualifiers say it. A
// kernel parameter whose qualifier the image does not allow is an error
// when the argument is set. The host may read and write any image.
//
// Buffer is the memory of an image1d_buffer_t, which lies over a buffer:
// its pixels are the buffer's bytes. Set it to the rt.Buffer itself.
type ImageDesc = core.ImageDesc

// Image is an image of any of OpenCL C's six image types (ImageDesc.Kind).
// The zero Image is no image; handles are copied freely and refer to the
// same image. Transfers (Read, Write) block until they are done; CopyTo
// and Fill return at once with the command's event.
type Image = core.Image

// NewImage creates an image as d describes, straight from the driver:
// Free releases it. A format the device lacks is an error wrapping
// errors.ErrUnsupported that lists the formats it has; a kind that
// ImageDesc does not name, and sizes that do not fit the kind, are errors
// wrapping ErrInvalidArgument.
func NewImage(c *Context, d ImageDesc) (Image, error) {
	return core.NewImage(c, d)
}

// ImageSite is a named allocation site of images, declared with
// //dgen:alloc as AllocSite is for buffers:
//
//	//dgen:alloc
//	var frames rt.ImageSite
//
// Its tag keys the allocator's free lists of images, and names the site in
// statistics and traces.
type ImageSite = core.ImageSite

// ImageRegion is a box of an image's pixels and, for a transfer, the
// layout of the host memory on the other side.
//
// Origin is the first pixel (x, y, z), where y is the layer of an
// image1d_array_t and z that of an image2d_array_t. Size is the box's extent in
// the same axes; the zero Size means everything from Origin to the
// image's end. A box outside the image is an error wrapping ErrOutOfRange.
//
// RowPitch and SlicePitch are the bytes from one row, and from one slice
// (or layer), of the host memory to the next; 0 means rows and slices
// packed without gaps. A pitch smaller than a row (or than the rows of a
// slice) is an error wrapping ErrInvalidArgument. They are ignored when
// the host side is one of Go's image types, whose Stride is the pitch.
type ImageRegion = core.ImageRegion
