package rt

// The methods of the six image types, each the same: they delegate to the
// image's handle. Transfers block until they are done; CopyTo and Fill
// return at once with the command's event.

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image1D) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image1D) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image1D) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image1D) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format,
// at dstOrigin.
func (i Image1D) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image1D) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image1DBuffer) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image1DBuffer) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image1DBuffer) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image1DBuffer) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format,
// at dstOrigin.
func (i Image1DBuffer) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image1DBuffer) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image1DArray) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image1DArray) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image1DArray) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image1DArray) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format,
// at dstOrigin.
func (i Image1DArray) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image1DArray) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image2D) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image2D) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image2D) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image2D) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format,
// at dstOrigin.
func (i Image2D) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image2D) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image2DArray) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image2DArray) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image2DArray) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image2DArray) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format,
// at dstOrigin.
func (i Image2DArray) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image2DArray) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image3D) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image3D) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image3D) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image3D) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format,
// at dstOrigin.
func (i Image3D) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image3D) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}
