package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// ImageKind is the OpenCL C type of an image. The zero ImageKind is none:
// ImageDesc.Kind is required.
type ImageKind = core.ImageKind

// The image kinds, one for each image type of OpenCL C.
const (
	Image1D       = core.Image1D
	Image1DBuffer = core.Image1DBuffer
	Image1DArray  = core.Image1DArray
	Image2D       = core.Image2D
	Image2DArray  = core.Image2DArray
	Image3D       = core.Image3D
)

// ChannelOrder is an image's channel order, as OpenCL names it without
// the CL_ prefix.
type ChannelOrder = core.ChannelOrder

// The channel orders. The zero ChannelOrder is none.
const (
	OrderR         = core.OrderR
	OrderA         = core.OrderA
	OrderRG        = core.OrderRG
	OrderRA        = core.OrderRA
	OrderRGB       = core.OrderRGB
	OrderRGBA      = core.OrderRGBA
	OrderBGRA      = core.OrderBGRA
	OrderARGB      = core.OrderARGB
	OrderABGR      = core.OrderABGR
	OrderIntensity = core.OrderIntensity
	OrderLuminance = core.OrderLuminance
	OrderRx        = core.OrderRx
	OrderRGx       = core.OrderRGx
	OrderRGBx      = core.OrderRGBx
	OrderDepth     = core.OrderDepth
	OrderSRGB      = core.OrderSRGB
	OrderSRGBx     = core.OrderSRGBx
	OrderSRGBA     = core.OrderSRGBA
	OrderSBGRA     = core.OrderSBGRA
)

// ChannelType is an image's channel data type, as OpenCL names it without
// the CL_ prefix.
type ChannelType = core.ChannelType

// The channel data types. The zero ChannelType is none.
const (
	SnormInt8        = core.SnormInt8
	SnormInt16       = core.SnormInt16
	UnormInt8        = core.UnormInt8
	UnormInt16       = core.UnormInt16
	UnormShort565    = core.UnormShort565
	UnormShort555    = core.UnormShort555
	UnormInt101010   = core.UnormInt101010
	UnormInt101010v2 = core.UnormInt101010v2
	UnormInt24       = core.UnormInt24
	SignedInt8       = core.SignedInt8
	SignedInt16      = core.SignedInt16
	SignedInt32      = core.SignedInt32
	UnsignedInt8     = core.UnsignedInt8
	UnsignedInt16    = core.UnsignedInt16
	UnsignedInt32    = core.UnsignedInt32
	HalfFloat        = core.HalfFloat
	Float            = core.Float
)

// Access is what kernels may do with an image, as OpenCL C's access
// qualifiers say it. The zero Access is ReadWrite.
type Access = core.Access

// The access modes.
const (
	ReadWrite = core.ReadWrite
	ReadOnly  = core.ReadOnly
	WriteOnly = core.WriteOnly
)

// AddressMode is what a sampler returns for coordinates outside the
// image, as OpenCL C's CLK_ADDRESS_ constants say it. The zero
// AddressMode is ClampToEdge.
type AddressMode = core.AddressMode

// The addressing modes. Repeat and MirroredRepeat need normalized
// coordinates.
const (
	ClampToEdge    = core.ClampToEdge
	Clamp          = core.Clamp
	AddressNone    = core.AddressNone
	Repeat         = core.Repeat
	MirroredRepeat = core.MirroredRepeat
)

// FilterMode is how a sampler filters, as OpenCL C's CLK_FILTER_
// constants say it. The zero FilterMode is Nearest.
type FilterMode = core.FilterMode

// The filter modes.
const (
	Nearest = core.Nearest
	Linear  = core.Linear
)

// DeviceType is the kind of a device.
type DeviceType = core.DeviceType

// The device types, as DGEN_DEVICE's selectors name them.
const (
	DeviceOther       = core.DeviceOther
	DeviceCPU         = core.DeviceCPU
	DeviceGPU         = core.DeviceGPU
	DeviceAccelerator = core.DeviceAccelerator
)

// AllocPolicy is the policy of a device's allocator (Config.AllocPolicy,
// DGEN_ALLOC_POLICY). The zero AllocPolicy is AllocFull.
type AllocPolicy = core.AllocPolicy

// The allocator policies.
const (
	// AllocFull is the tagged free list plus the untagged size-class pool
	// and release-and-retry on out of memory ("full").
	AllocFull = core.AllocFull
	// AllocTagged is the tagged free list only, as Futhark's allocator
	// (2018) has it: untagged allocations go to the driver and back, and
	// out of memory is not retried ("tagged").
	AllocTagged = core.AllocTagged
	// AllocBestFit is the policy Futhark's runtime moved to in 2020: one
	// free list across tags, every freed block held, and a request served
	// by the smallest held block that is large enough and has the
	// request's tag, is under 4096 bytes, or would be less than half empty;
	// release-and-retry on out of memory is on ("bestfit").
	AllocBestFit = core.AllocBestFit
)

// GraphMode is what command graphs (Queue.Record) are prepared as
// (Config.Graphs).
type GraphMode = core.GraphMode

// The graph modes.
const (
	// GraphsAuto uses the device API's own graph objects (OpenCL command
	// buffers, CUDA graphs) unless DGEN_OPENCL_COMMAND_BUFFER or
	// DGEN_CUDA_GRAPH is 0 ("auto").
	GraphsAuto = core.GraphsAuto
	// GraphsNative uses them wherever the backend has them ("native").
	GraphsNative = core.GraphsNative
	// GraphsLoop replays every graph as a loop of prepared commands, one
	// backend call per launch ("loop").
	GraphsLoop = core.GraphsLoop
)

// Backend names a backend: one that a package registers (rt/opencl
// registers "opencl", rt/cuda "cuda"), or BackendAuto. It is an open set:
// UnmarshalText accepts the names registered when it runs.
type Backend = core.Backend

// The backends of dgen's own packages.
const (
	// BackendAuto chooses rt/cuda for an NVIDIA GPU when it is imported
	// and libcuda loads, else rt/opencl.
	BackendAuto   = core.BackendAuto
	BackendOpenCL = core.BackendOpenCL
	BackendCUDA   = core.BackendCUDA
)
