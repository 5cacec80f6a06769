package driver

import (
	"fmt"
	"unsafe"
)

// ImageKind is the kind of an image, as OpenCL C names its types.
type ImageKind uint8

// The image kinds.
const (
	Image1D       ImageKind = iota + 1 // image1d_t
	Image1DBuffer                      // image1d_buffer_t: a 1D image over a buffer
	Image1DArray                       // image1d_array_t
	Image2D                            // image2d_t
	Image2DArray                       // image2d_array_t
	Image3D                            // image3d_t
)

var imageKindNames = [...]string{
	Image1D: "image1d_t", Image1DBuffer: "image1d_buffer_t", Image1DArray: "image1d_array_t",
	Image2D: "image2d_t", Image2DArray: "image2d_array_t", Image3D: "image3d_t",
}

// String returns the OpenCL C name of the kind, "image2d_t".
func (k ImageKind) String() string {
	if int(k) < len(imageKindNames) && imageKindNames[k] != "" {
		return imageKindNames[k]
	}
	return fmt.Sprintf("ImageKind(%d)", int(k))
}

// ImageFormat is an image's channel order and channel data type, spelled
// as OpenCL spells them without the CL_ prefix: Order "RGBA", "R",
// "BGRA", ...; Type "UNORM_INT8", "FLOAT", ... A backend translates them to
// its own codes and back.
type ImageFormat struct {
	Order, Type string
}

// String returns "RGBA/UNORM_INT8".
func (f ImageFormat) String() string { return f.Order + "/" + f.Type }

// MemAccess is what kernels may do with an image (OpenCL's
// CL_MEM_READ_WRITE, CL_MEM_READ_ONLY and CL_MEM_WRITE_ONLY).
type MemAccess uint8

// The access modes.
const (
	ReadWrite MemAccess = iota
	ReadOnly
	WriteOnly
)

// ImageDesc describes an image to create. Sizes are in pixels; Height is
// 1, and Depth and Layers are 0, where the kind has no such dimension.
type ImageDesc struct {
	Kind                 ImageKind
	Format               ImageFormat
	Width, Height, Depth int
	Layers               int // the array size of an array kind
	Access               MemAccess
	Buffer               Buffer // the buffer of an Image1DBuffer
}

// SamplerDesc describes a sampler: normalized coordinates or not, the
// addressing mode ("none", "clamp_to_edge", "clamp", "repeat",
// "mirrored_repeat") and the filter ("nearest", "linear"), as OpenCL C
// names them after CLK_ADDRESS_ and CLK_FILTER_.
type SamplerDesc struct {
	Normalized bool
	Address    string
	Filter     string
}

// Sampler is a backend sampler object.
type Sampler interface {
	// Release releases the sampler.
	Release() error
}

// ImageContext is implemented by a Context whose devices have images.
// rt offers images only on backends that implement it. Images are
// Buffers: kernels take them through Kernel.SetArgBuffer, and they are
// released with Release.
type ImageContext interface {
	// ImageFormats lists the formats that every device of the context
	// supports for images of kind k with access a.
	ImageFormats(k ImageKind, a MemAccess) ([]ImageFormat, error)
	// NewImage creates an image as d describes.
	NewImage(d ImageDesc) (Buffer, error)
	// NewSampler creates a sampler as d describes.
	NewSampler(d SamplerDesc) (Sampler, error)
}

// ImageRegion is a box of pixels of an image and the layout of the host
// memory that a transfer reads or writes: Origin and Size in pixels
// (x, y, and z or the array layer), and the bytes from one row and from
// one slice of the host memory to the next.
type ImageRegion struct {
	Origin, Size         [3]int
	RowPitch, SlicePitch int64
}

// ImageQueue is implemented by a Queue that transfers images. Like the
// buffer transfers of Queue, a blocking transfer creates no event and
// returns nil.
type ImageQueue interface {
	// ReadImage copies region r of img to host memory at dst, laid out
	// with r's pitches.
	ReadImage(img Buffer, blocking bool, r ImageRegion, dst unsafe.Pointer, wait []Event) (Event, error)
	// WriteImage copies host memory at src, laid out with r's pitches, to
	// region r of img.
	WriteImage(img Buffer, blocking bool, r ImageRegion, src unsafe.Pointer, wait []Event) (Event, error)
	// CopyImage copies the box of size pixels at srcOrigin of src to
	// dstOrigin of dst; the images have one format.
	CopyImage(src, dst Buffer, srcOrigin, dstOrigin, size [3]int, wait []Event) (Event, error)
	// FillImage sets the box of size pixels at origin of img to color: four
	// float32, int32 or uint32 values as the image's channel type needs.
	FillImage(img Buffer, color [16]byte, origin, size [3]int, wait []Event) (Event, error)
}

// SamplerKernel is implemented by a Kernel that takes samplers.
type SamplerKernel interface {
	// SetArgSampler sets argument i to the sampler s.
	SetArgSampler(i int, s Sampler) error
}
