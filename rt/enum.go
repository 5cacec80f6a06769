package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// ImageKind is the OpenCL C type of an image. The zero ImageKind is none:
// ImageDesc.Kind is required.
type ImageKind core.ImageKind

// The image kinds, one for each image type of OpenCL C.
const (
	Image1D       = ImageKind(core.Image1D)
	Image1DBuffer = ImageKind(core.Image1DBuffer)
	Image1DArray  = ImageKind(core.Image1DArray)
	Image2D       = ImageKind(core.Image2D)
	Image2DArray  = ImageKind(core.Image2DArray)
	Image3D       = ImageKind(core.Image3D)
)

// String returns the OpenCL C type, such as "image2d_t".
func (k ImageKind) String() string { return core.ImageKind(k).String() }

// MarshalText implements encoding.TextMarshaler.
func (k ImageKind) MarshalText() ([]byte, error) { return core.ImageKind(k).MarshalText() }

// UnmarshalText parses an OpenCL C image type, such as "image2d_t".
func (k *ImageKind) UnmarshalText(b []byte) error { return (*core.ImageKind)(k).UnmarshalText(b) }

// ChannelOrder is an image's channel order, as OpenCL names it without
// the CL_ prefix.
type ChannelOrder core.ChannelOrder

// The channel orders. The zero ChannelOrder is none.
const (
	OrderR         = ChannelOrder(core.OrderR)
	OrderA         = ChannelOrder(core.OrderA)
	OrderRG        = ChannelOrder(core.OrderRG)
	OrderRA        = ChannelOrder(core.OrderRA)
	OrderRGB       = ChannelOrder(core.OrderRGB)
	OrderRGBA      = ChannelOrder(core.OrderRGBA)
	OrderBGRA      = ChannelOrder(core.OrderBGRA)
	OrderARGB      = ChannelOrder(core.OrderARGB)
	OrderABGR      = ChannelOrder(core.OrderABGR)
	OrderIntensity = ChannelOrder(core.OrderIntensity)
	OrderLuminance = ChannelOrder(core.OrderLuminance)
	OrderRx        = ChannelOrder(core.OrderRx)
	OrderRGx       = ChannelOrder(core.OrderRGx)
	OrderRGBx      = ChannelOrder(core.OrderRGBx)
	OrderDepth     = ChannelOrder(core.OrderDepth)
	OrderSRGB      = ChannelOrder(core.OrderSRGB)
	OrderSRGBx     = ChannelOrder(core.OrderSRGBx)
	OrderSRGBA     = ChannelOrder(core.OrderSRGBA)
	OrderSBGRA     = ChannelOrder(core.OrderSBGRA)
)

// String returns the order as OpenCL names it without CL_, such as "RGBA".
func (o ChannelOrder) String() string { return core.ChannelOrder(o).String() }

// MarshalText implements encoding.TextMarshaler.
func (o ChannelOrder) MarshalText() ([]byte, error) { return core.ChannelOrder(o).MarshalText() }

// UnmarshalText parses an order as OpenCL names it without CL_, such as
// "RGBA".
func (o *ChannelOrder) UnmarshalText(b []byte) error { return (*core.ChannelOrder)(o).UnmarshalText(b) }

// ChannelType is an image's channel data type, as OpenCL names it without
// the CL_ prefix.
type ChannelType core.ChannelType

// The channel data types. The zero ChannelType is none.
const (
	SnormInt8        = ChannelType(core.SnormInt8)
	SnormInt16       = ChannelType(core.SnormInt16)
	UnormInt8        = ChannelType(core.UnormInt8)
	UnormInt16       = ChannelType(core.UnormInt16)
	UnormShort565    = ChannelType(core.UnormShort565)
	UnormShort555    = ChannelType(core.UnormShort555)
	UnormInt101010   = ChannelType(core.UnormInt101010)
	UnormInt101010v2 = ChannelType(core.UnormInt101010v2)
	UnormInt24       = ChannelType(core.UnormInt24)
	SignedInt8       = ChannelType(core.SignedInt8)
	SignedInt16      = ChannelType(core.SignedInt16)
	SignedInt32      = ChannelType(core.SignedInt32)
	UnsignedInt8     = ChannelType(core.UnsignedInt8)
	UnsignedInt16    = ChannelType(core.UnsignedInt16)
	UnsignedInt32    = ChannelType(core.UnsignedInt32)
	HalfFloat        = ChannelType(core.HalfFloat)
	Float            = ChannelType(core.Float)
)

// String returns the type as OpenCL names it without CL_, such as
// "UNORM_INT8".
func (t ChannelType) String() string { return core.ChannelType(t).String() }

// MarshalText implements encoding.TextMarshaler.
func (t ChannelType) MarshalText() ([]byte, error) { return core.ChannelType(t).MarshalText() }

// UnmarshalText parses a type as OpenCL names it without CL_, such as
// "UNORM_INT8".
func (t *ChannelType) UnmarshalText(b []byte) error { return (*core.ChannelType)(t).UnmarshalText(b) }

// Access is what kernels may do with an image, as OpenCL C's access
// qualifiers say it. The zero Access is ReadWrite.
type Access core.Access

// The access modes.
const (
	ReadWrite = Access(core.ReadWrite)
	ReadOnly  = Access(core.ReadOnly)
	WriteOnly = Access(core.WriteOnly)
)

// String returns the OpenCL C qualifier, such as "read_only".
func (a Access) String() string { return core.Access(a).String() }

// MarshalText implements encoding.TextMarshaler.
func (a Access) MarshalText() ([]byte, error) { return core.Access(a).MarshalText() }

// UnmarshalText parses an OpenCL C access qualifier, such as "read_only".
func (a *Access) UnmarshalText(b []byte) error { return (*core.Access)(a).UnmarshalText(b) }

// AddressMode is what a sampler returns for coordinates outside the
// image, as OpenCL C's CLK_ADDRESS_ constants say it. The zero
// AddressMode is ClampToEdge.
type AddressMode core.AddressMode

// The addressing modes. Repeat and MirroredRepeat need normalized
// coordinates.
const (
	ClampToEdge    = AddressMode(core.ClampToEdge)
	Clamp          = AddressMode(core.Clamp)
	AddressNone    = AddressMode(core.AddressNone)
	Repeat         = AddressMode(core.Repeat)
	MirroredRepeat = AddressMode(core.MirroredRepeat)
)

// String returns the mode as CLK_ADDRESS_ spells it, in lower case
// without the prefix, such as "clamp_to_edge".
func (m AddressMode) String() string { return core.AddressMode(m).String() }

// MarshalText implements encoding.TextMarshaler.
func (m AddressMode) MarshalText() ([]byte, error) { return core.AddressMode(m).MarshalText() }

// UnmarshalText parses a mode as String spells it.
func (m *AddressMode) UnmarshalText(b []byte) error { return (*core.AddressMode)(m).UnmarshalText(b) }

// FilterMode is how a sampler filters, as OpenCL C's CLK_FILTER_
// constants say it. The zero FilterMode is Nearest.
type FilterMode core.FilterMode

// The filter modes.
const (
	Nearest = FilterMode(core.Nearest)
	Linear  = FilterMode(core.Linear)
)

// String returns "nearest" or "linear".
func (f FilterMode) String() string { return core.FilterMode(f).String() }

// MarshalText implements encoding.TextMarshaler.
func (f FilterMode) MarshalText() ([]byte, error) { return core.FilterMode(f).MarshalText() }

// UnmarshalText parses "nearest" or "linear".
func (f *FilterMode) UnmarshalText(b []byte) error { return (*core.FilterMode)(f).UnmarshalText(b) }

// DeviceType is the kind of a device.
type DeviceType core.DeviceType

// The device types, as DGEN_DEVICE's selectors name them.
const (
	DeviceOther       = DeviceType(core.DeviceOther)
	DeviceCPU         = DeviceType(core.DeviceCPU)
	DeviceGPU         = DeviceType(core.DeviceGPU)
	DeviceAccelerator = DeviceType(core.DeviceAccelerator)
)

// String returns "cpu", "gpu", "accelerator" or "other".
func (t DeviceType) String() string { return core.DeviceType(t).String() }

// MarshalText implements encoding.TextMarshaler.
func (t DeviceType) MarshalText() ([]byte, error) { return core.DeviceType(t).MarshalText() }

// UnmarshalText parses "cpu", "gpu", "accelerator" or "other".
func (t *DeviceType) UnmarshalText(b []byte) error { return (*core.DeviceType)(t).UnmarshalText(b) }

// AllocPolicy is the policy of a device's allocator (Config.AllocPolicy,
// DGEN_ALLOC_POLICY). The zero AllocPolicy is AllocFull.
type AllocPolicy core.AllocPolicy

// The allocator policies.
const (
	// AllocFull is the tagged free list plus the untagged size-class pool
	// and release-and-retry on out of memory ("full").
	AllocFull = AllocPolicy(core.AllocFull)
	// AllocTagged is the tagged free list only, as Futhark's allocator
	// (2018) has it: untagged allocations go to the driver and back, and
	// out of memory is not retried ("tagged").
	AllocTagged = AllocPolicy(core.AllocTagged)
	// AllocBestFit is the policy Futhark's runtime moved to in 2020: one
	// free list across tags, every freed block held, and a request served
	// by the smallest held block that is large enough and has the
	// request's tag, is under 4096 bytes, or would be less than half empty;
	// release-and-retry on out of memory is on ("bestfit").
	AllocBestFit = AllocPolicy(core.AllocBestFit)
)

// String returns "full", "tagged" or "bestfit".
func (p AllocPolicy) String() string { return core.AllocPolicy(p).String() }

// MarshalText implements encoding.TextMarshaler.
func (p AllocPolicy) MarshalText() ([]byte, error) { return core.AllocPolicy(p).MarshalText() }

// UnmarshalText parses "full", "tagged" or "bestfit", in any case.
func (p *AllocPolicy) UnmarshalText(b []byte) error { return (*core.AllocPolicy)(p).UnmarshalText(b) }

// GraphMode is what command graphs (Queue.Record) are prepared as
// (Config.Graphs).
type GraphMode core.GraphMode

// The graph modes.
const (
	// GraphsAuto uses the device API's own graph objects (OpenCL command
	// buffers, CUDA graphs) wherever the backend has them ("auto").
	GraphsAuto = GraphMode(core.GraphsAuto)
	// GraphsNative is GraphsAuto ("native").
	GraphsNative = GraphMode(core.GraphsNative)
	// GraphsLoop replays every graph as a loop of prepared commands, one
	// backend call per launch ("loop").
	GraphsLoop = GraphMode(core.GraphsLoop)
)

// String returns "auto", "native" or "loop".
func (m GraphMode) String() string { return core.GraphMode(m).String() }

// MarshalText implements encoding.TextMarshaler.
func (m GraphMode) MarshalText() ([]byte, error) { return core.GraphMode(m).MarshalText() }

// UnmarshalText parses "auto", "native" or "loop".
func (m *GraphMode) UnmarshalText(b []byte) error { return (*core.GraphMode)(m).UnmarshalText(b) }

// Backend names a backend: one that a package registers (rt/opencl
// registers "opencl", rt/cuda "cuda"), or BackendAuto. It is an open set:
// UnmarshalText accepts the names registered when it runs.
type Backend core.Backend

// The backends of dgen's own packages.
const (
	// BackendAuto chooses rt/cuda for an NVIDIA GPU when it is imported
	// and libcuda loads, else rt/opencl.
	BackendAuto   = Backend(core.BackendAuto)
	BackendOpenCL = Backend(core.BackendOpenCL)
	BackendCUDA   = Backend(core.BackendCUDA)
)

// String returns the backend's name, "auto" for BackendAuto.
func (b Backend) String() string { return core.Backend(b).String() }

// MarshalText implements encoding.TextMarshaler.
func (b Backend) MarshalText() ([]byte, error) { return core.Backend(b).MarshalText() }

// UnmarshalText parses "auto" (or nothing) or the name of a registered
// backend, in any case; another name is an error that lists the
// registered ones.
func (b *Backend) UnmarshalText(text []byte) error { return (*core.Backend)(b).UnmarshalText(text) }

// RemoteMode says which way entries flow between a node and the shared
// tier (RemoteCacheConfig.Mode, DGEN_CACHE_REMOTE_MODE). The zero
// RemoteMode is RemoteReadWrite.
type RemoteMode core.RemoteMode

// The remote modes.
const (
	// RemoteReadWrite fetches entries and publishes the programs the node
	// builds ("read_write").
	RemoteReadWrite = RemoteMode(core.RemoteReadWrite)
	// RemoteRead fetches entries and publishes nothing: a node that runs
	// code but must not supply it ("read").
	RemoteRead = RemoteMode(core.RemoteRead)
	// RemoteWrite publishes and never fetches: a node that warms the cache
	// ("write").
	RemoteWrite = RemoteMode(core.RemoteWrite)
)

// String returns "read_write", "read" or "write".
func (m RemoteMode) String() string { return core.RemoteMode(m).String() }

// MarshalText implements encoding.TextMarshaler.
func (m RemoteMode) MarshalText() ([]byte, error) { return core.RemoteMode(m).MarshalText() }

// UnmarshalText parses "read_write", "read" or "write", in any case.
func (m *RemoteMode) UnmarshalText(b []byte) error { return (*core.RemoteMode)(m).UnmarshalText(b) }
