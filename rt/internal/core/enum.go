package core

import (
	"fmt"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// The closed sets of rt's configuration: image kinds, channel orders and
// types, access, sampler addressing and filtering, device types and
// allocator policies. Each is a typed constant whose String is the name
// that OpenCL C or the DGEN_ variables spell it with, and whose
// UnmarshalText parses that name (the environment's values go through
// it), so that a typo in Go code is a compile error and one in the
// environment an error that lists the valid names.

// enumNames is the name of each value of an enum, indexed by the value;
// an empty name is no value.
type enumNames []string

// name returns the name of v, or T(v) for a value without one.
func (n enumNames) name(typ string, v int) string {
	if v >= 0 && v < len(n) && n[v] != "" {
		return n[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// parse returns the value that s names; the error, wrapping
// ErrInvalidArgument, lists the names.
func (n enumNames) parse(what, s string) (int, error) {
	for v, name := range n {
		if name != "" && name == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q: want one of %s", ErrInvalidArgument, what, s, strings.Join(n.valid(), ", "))
}

// valid returns the names, in the order of their values.
func (n enumNames) valid() []string {
	var valid []string
	for _, name := range n {
		if name != "" {
			valid = append(valid, name)
		}
	}
	return valid
}

// ImageKind is the OpenCL C type of an image. The zero ImageKind is none:
// ImageDesc.Kind is required.
type ImageKind uint8

// The image kinds, one for each image type of OpenCL C.
const (
	Image1D       ImageKind = ImageKind(driver.Image1D)       // image1d_t
	Image1DBuffer ImageKind = ImageKind(driver.Image1DBuffer) // image1d_buffer_t: a 1D image over a buffer
	Image1DArray  ImageKind = ImageKind(driver.Image1DArray)  // image1d_array_t
	Image2D       ImageKind = ImageKind(driver.Image2D)       // image2d_t
	Image2DArray  ImageKind = ImageKind(driver.Image2DArray)  // image2d_array_t
	Image3D       ImageKind = ImageKind(driver.Image3D)       // image3d_t
)

var imageKindNames = enumNames{
	Image1D: "image1d_t", Image1DBuffer: "image1d_buffer_t", Image1DArray: "image1d_array_t",
	Image2D: "image2d_t", Image2DArray: "image2d_array_t", Image3D: "image3d_t",
}

// String returns the OpenCL C type, such as "image2d_t".
func (k ImageKind) String() string { return imageKindNames.name("ImageKind", int(k)) }

// MarshalText implements encoding.TextMarshaler.
func (k ImageKind) MarshalText() ([]byte, error) { return marshal(k, imageKindNames, int(k)) }

// UnmarshalText parses an OpenCL C image type, such as "image2d_t".
func (k *ImageKind) UnmarshalText(b []byte) error {
	return unmarshal(k, imageKindNames, "image kind", b)
}

// ChannelOrder is an image's channel order, as OpenCL names it without
// the CL_ prefix.
type ChannelOrder uint8

// The channel orders. The zero ChannelOrder is none.
const (
	OrderR ChannelOrder = iota + 1
	OrderA
	OrderRG
	OrderRA
	OrderRGB
	OrderRGBA
	OrderBGRA
	OrderARGB
	OrderABGR
	OrderIntensity
	OrderLuminance
	OrderRx
	OrderRGx
	OrderRGBx
	OrderDepth
	OrderSRGB
	OrderSRGBx
	OrderSRGBA
	OrderSBGRA
)

var channelOrderNames = enumNames{
	OrderR: "R", OrderA: "A", OrderRG: "RG", OrderRA: "RA", OrderRGB: "RGB", OrderRGBA: "RGBA",
	OrderBGRA: "BGRA", OrderARGB: "ARGB", OrderABGR: "ABGR", OrderIntensity: "INTENSITY",
	OrderLuminance: "LUMINANCE", OrderRx: "Rx", OrderRGx: "RGx", OrderRGBx: "RGBx", OrderDepth: "DEPTH",
	OrderSRGB: "sRGB", OrderSRGBx: "sRGBx", OrderSRGBA: "sRGBA", OrderSBGRA: "sBGRA",
}

// channelCounts is the number of channels of each order.
var channelCounts = [...]int{
	OrderR: 1, OrderA: 1, OrderIntensity: 1, OrderLuminance: 1, OrderDepth: 1, OrderRx: 1,
	OrderRG: 2, OrderRA: 2, OrderRGx: 2, OrderRGB: 3, OrderRGBx: 3, OrderSRGB: 3, OrderSRGBx: 3,
	OrderRGBA: 4, OrderBGRA: 4, OrderARGB: 4, OrderABGR: 4, OrderSRGBA: 4, OrderSBGRA: 4,
}

// String returns the order as OpenCL names it without CL_, such as "RGBA".
func (o ChannelOrder) String() string { return channelOrderNames.name("ChannelOrder", int(o)) }

// MarshalText implements encoding.TextMarshaler.
func (o ChannelOrder) MarshalText() ([]byte, error) { return marshal(o, channelOrderNames, int(o)) }

// UnmarshalText parses an order as OpenCL names it without CL_, such as
// "RGBA".
func (o *ChannelOrder) UnmarshalText(b []byte) error {
	return unmarshal(o, channelOrderNames, "channel order", b)
}

// ChannelType is an image's channel data type, as OpenCL names it without
// the CL_ prefix.
type ChannelType uint8

// The channel data types. The zero ChannelType is none.
const (
	SnormInt8 ChannelType = iota + 1
	SnormInt16
	UnormInt8
	UnormInt16
	UnormShort565
	UnormShort555
	UnormInt101010
	UnormInt101010v2 // CL_UNORM_INT_101010_2
	UnormInt24
	SignedInt8
	SignedInt16
	SignedInt32
	UnsignedInt8
	UnsignedInt16
	UnsignedInt32
	HalfFloat
	Float
)

var channelTypeNames = enumNames{
	SnormInt8: "SNORM_INT8", SnormInt16: "SNORM_INT16", UnormInt8: "UNORM_INT8", UnormInt16: "UNORM_INT16",
	UnormShort565: "UNORM_SHORT_565", UnormShort555: "UNORM_SHORT_555", UnormInt101010: "UNORM_INT_101010",
	UnormInt101010v2: "UNORM_INT_101010_2", UnormInt24: "UNORM_INT24",
	SignedInt8: "SIGNED_INT8", SignedInt16: "SIGNED_INT16", SignedInt32: "SIGNED_INT32",
	UnsignedInt8: "UNSIGNED_INT8", UnsignedInt16: "UNSIGNED_INT16", UnsignedInt32: "UNSIGNED_INT32",
	HalfFloat: "HALF_FLOAT", Float: "FLOAT",
}

// channelSizes is the bytes of a channel of each type, or of the whole
// pixel for a packed type (packed true).
var channelSizes = [...]struct {
	bytes  int
	packed bool
}{
	SnormInt8: {1, false}, UnormInt8: {1, false}, SignedInt8: {1, false}, UnsignedInt8: {1, false},
	SnormInt16: {2, false}, UnormInt16: {2, false}, SignedInt16: {2, false}, UnsignedInt16: {2, false}, HalfFloat: {2, false},
	SignedInt32: {4, false}, UnsignedInt32: {4, false}, Float: {4, false},
	UnormShort565: {2, true}, UnormShort555: {2, true}, UnormInt101010: {4, true}, UnormInt24: {4, true}, UnormInt101010v2: {4, true},
}

// String returns the type as OpenCL names it without CL_, such as
// "UNORM_INT8".
func (t ChannelType) String() string { return channelTypeNames.name("ChannelType", int(t)) }

// MarshalText implements encoding.TextMarshaler.
func (t ChannelType) MarshalText() ([]byte, error) { return marshal(t, channelTypeNames, int(t)) }

// UnmarshalText parses a type as OpenCL names it without CL_, such as
// "UNORM_INT8".
func (t *ChannelType) UnmarshalText(b []byte) error {
	return unmarshal(t, channelTypeNames, "channel type", b)
}

// Access is what kernels may do with an image, as OpenCL C's access
// qualifiers say it. The zero Access is ReadWrite.
type Access uint8

// The access modes.
const (
	ReadWrite Access = Access(driver.ReadWrite) // read_write
	ReadOnly  Access = Access(driver.ReadOnly)  // read_only
	WriteOnly Access = Access(driver.WriteOnly) // write_only
)

var accessNames = enumNames{ReadWrite: "read_write", ReadOnly: "read_only", WriteOnly: "write_only"}

// String returns the OpenCL C qualifier, such as "read_only".
func (a Access) String() string { return accessNames.name("Access", int(a)) }

// MarshalText implements encoding.TextMarshaler.
func (a Access) MarshalText() ([]byte, error) { return marshal(a, accessNames, int(a)) }

// UnmarshalText parses an OpenCL C access qualifier, such as "read_only".
func (a *Access) UnmarshalText(b []byte) error { return unmarshal(a, accessNames, "access", b) }

// AddressMode is what a sampler returns for coordinates outside the
// image, as OpenCL C's CLK_ADDRESS_ constants say it. The zero
// AddressMode is ClampToEdge.
type AddressMode uint8

// The addressing modes. Repeat and MirroredRepeat need normalized
// coordinates.
const (
	ClampToEdge    AddressMode = iota // CLK_ADDRESS_CLAMP_TO_EDGE
	Clamp                             // CLK_ADDRESS_CLAMP
	AddressNone                       // CLK_ADDRESS_NONE
	Repeat                            // CLK_ADDRESS_REPEAT
	MirroredRepeat                    // CLK_ADDRESS_MIRRORED_REPEAT
)

var addressNames = enumNames{ClampToEdge: "clamp_to_edge", Clamp: "clamp", AddressNone: "none", Repeat: "repeat", MirroredRepeat: "mirrored_repeat"}

// String returns the mode as CLK_ADDRESS_ spells it, in lower case
// without the prefix, such as "clamp_to_edge".
func (m AddressMode) String() string { return addressNames.name("AddressMode", int(m)) }

// MarshalText implements encoding.TextMarshaler.
func (m AddressMode) MarshalText() ([]byte, error) { return marshal(m, addressNames, int(m)) }

// UnmarshalText parses a mode as String spells it.
func (m *AddressMode) UnmarshalText(b []byte) error {
	return unmarshal(m, addressNames, "address mode", b)
}

// FilterMode is how a sampler filters, as OpenCL C's CLK_FILTER_
// constants say it. The zero FilterMode is Nearest.
type FilterMode uint8

// The filter modes.
const (
	Nearest FilterMode = iota // CLK_FILTER_NEAREST
	Linear                    // CLK_FILTER_LINEAR
)

var filterNames = enumNames{Nearest: "nearest", Linear: "linear"}

// String returns "nearest" or "linear".
func (f FilterMode) String() string { return filterNames.name("FilterMode", int(f)) }

// MarshalText implements encoding.TextMarshaler.
func (f FilterMode) MarshalText() ([]byte, error) { return marshal(f, filterNames, int(f)) }

// UnmarshalText parses "nearest" or "linear".
func (f *FilterMode) UnmarshalText(b []byte) error { return unmarshal(f, filterNames, "filter", b) }

// DeviceType is the kind of a device.
type DeviceType uint8

// The device types, as DGEN_DEVICE's selectors name them.
const (
	DeviceOther DeviceType = iota
	DeviceCPU
	DeviceGPU
	DeviceAccelerator
)

var deviceTypeNames = enumNames{DeviceOther: "other", DeviceCPU: "cpu", DeviceGPU: "gpu", DeviceAccelerator: "accelerator"}

// deviceType converts the driver's device type.
func deviceType(t driver.DeviceType) DeviceType {
	switch t {
	case driver.DeviceCPU:
		return DeviceCPU
	case driver.DeviceGPU:
		return DeviceGPU
	case driver.DeviceAccelerator:
		return DeviceAccelerator
	}
	return DeviceOther
}

// String returns "cpu", "gpu", "accelerator" or "other".
func (t DeviceType) String() string { return deviceTypeNames.name("DeviceType", int(t)) }

// MarshalText implements encoding.TextMarshaler.
func (t DeviceType) MarshalText() ([]byte, error) { return marshal(t, deviceTypeNames, int(t)) }

// UnmarshalText parses "cpu", "gpu", "accelerator" or "other".
func (t *DeviceType) UnmarshalText(b []byte) error {
	return unmarshal(t, deviceTypeNames, "device type", b)
}

// AllocPolicy is the policy of a device's allocator (Config.AllocPolicy,
// DGEN_ALLOC_POLICY). The zero AllocPolicy is AllocFull.
type AllocPolicy uint8

// The allocator policies.
const (
	// AllocFull is the tagged free list plus the untagged size-class pool
	// and release-and-retry on out of memory ("full").
	AllocFull AllocPolicy = iota
	// AllocTagged is the tagged free list only, as Futhark's allocator
	// (2018) has it: untagged allocations go to the driver and back, and
	// out of memory is not retried ("tagged").
	AllocTagged
	// AllocBestFit is the policy Futhark's runtime moved to in 2020: one
	// free list across tags, every freed block held, and a request served
	// by the smallest held block that is large enough and has the
	// request's tag, is under 4096 bytes, or would be less than half empty;
	// release-and-retry on out of memory is on ("bestfit").
	AllocBestFit
)

var allocPolicyNames = enumNames{AllocFull: "full", AllocTagged: "tagged", AllocBestFit: "bestfit"}

// String returns "full", "tagged" or "bestfit".
func (p AllocPolicy) String() string { return allocPolicyNames.name("AllocPolicy", int(p)) }

// MarshalText implements encoding.TextMarshaler.
func (p AllocPolicy) MarshalText() ([]byte, error) { return marshal(p, allocPolicyNames, int(p)) }

// UnmarshalText parses "full", "tagged" or "bestfit", in any case.
func (p *AllocPolicy) UnmarshalText(b []byte) error {
	return unmarshal(p, allocPolicyNames, "allocator policy", []byte(strings.ToLower(string(b))))
}

// GraphMode is what command graphs (Queue.Record) are prepared as
// (Config.Graphs).
type GraphMode uint8

// The graph modes.
const (
	// GraphsAuto uses the device API's own graph objects (OpenCL command
	// buffers, CUDA graphs) wherever the backend has them ("auto").
	GraphsAuto GraphMode = iota
	// GraphsNative is GraphsAuto ("native").
	GraphsNative
	// GraphsLoop replays every graph as a loop of prepared commands, one
	// backend call per launch ("loop").
	GraphsLoop
)

var graphModeNames = enumNames{GraphsAuto: "auto", GraphsNative: "native", GraphsLoop: "loop"}

// RemoteMode says which way entries flow between a node and the shared
// tier (RemoteCacheConfig.Mode, DGEN_CACHE_REMOTE_MODE). The zero
// RemoteMode is RemoteReadWrite.
type RemoteMode uint8

// The remote modes.
const (
	// RemoteReadWrite fetches entries and publishes the programs the node
	// builds ("read_write").
	RemoteReadWrite RemoteMode = iota
	// RemoteRead fetches entries and publishes nothing: a node that runs
	// code but must not supply it ("read").
	RemoteRead
	// RemoteWrite publishes and never fetches: a node that warms the cache
	// ("write").
	RemoteWrite
)

var remoteModeNames = enumNames{RemoteReadWrite: "read_write", RemoteRead: "read", RemoteWrite: "write"}

// String returns "read_write", "read" or "write".
func (m RemoteMode) String() string { return remoteModeNames.name("RemoteMode", int(m)) }

// MarshalText implements encoding.TextMarshaler.
func (m RemoteMode) MarshalText() ([]byte, error) { return marshal(m, remoteModeNames, int(m)) }

// UnmarshalText parses "read_write", "read" or "write", in any case.
func (m *RemoteMode) UnmarshalText(b []byte) error {
	return unmarshal(m, remoteModeNames, "remote mode", []byte(strings.ToLower(string(b))))
}

// String returns "auto", "native" or "loop".
func (m GraphMode) String() string { return graphModeNames.name("GraphMode", int(m)) }

// MarshalText implements encoding.TextMarshaler.
func (m GraphMode) MarshalText() ([]byte, error) { return marshal(m, graphModeNames, int(m)) }

// UnmarshalText parses "auto", "native" or "loop".
func (m *GraphMode) UnmarshalText(b []byte) error {
	return unmarshal(m, graphModeNames, "graph mode", b)
}

// Priority is the scheduling priority of a queue (QueueConfig.Priority).
// The zero Priority is PriorityNormal.
type Priority uint8

// The queue priorities.
const (
	// PriorityNormal is the device's default priority, which every queue
	// runs at unless made at another ("normal").
	PriorityNormal Priority = Priority(driver.PriorityNormal)
	// PriorityHigh is for latency-sensitive work: the device starts a
	// high-priority queue's ready commands before those of the others
	// ("high").
	PriorityHigh Priority = Priority(driver.PriorityHigh)
	// PriorityLow is for batch work that yields to the others ("low").
	PriorityLow Priority = Priority(driver.PriorityLow)
)

// numPriorities is the number of priorities: those below it are valid.
const numPriorities = int(PriorityLow) + 1

var priorityNames = enumNames{PriorityNormal: "normal", PriorityHigh: "high", PriorityLow: "low"}

// String returns "normal", "high" or "low".
func (p Priority) String() string { return priorityNames.name("Priority", int(p)) }

// MarshalText implements encoding.TextMarshaler.
func (p Priority) MarshalText() ([]byte, error) { return marshal(p, priorityNames, int(p)) }

// UnmarshalText parses "normal", "high" or "low".
func (p *Priority) UnmarshalText(b []byte) error {
	return unmarshal(p, priorityNames, "queue priority", b)
}

// Backend names a backend: one that a package registers (rt/opencl
// registers "opencl", rt/cuda "cuda"), or BackendAuto. It is an open set:
// UnmarshalText accepts the names registered when it runs.
type Backend string

// The backends of dgen's own packages.
const (
	// BackendAuto chooses rt/cuda for an NVIDIA GPU when it is imported
	// and libcuda loads, else rt/opencl.
	BackendAuto   Backend = ""
	BackendOpenCL Backend = "opencl"
	BackendCUDA   Backend = "cuda"
)

// String returns the backend's name, "auto" for BackendAuto.
func (b Backend) String() string {
	if b == BackendAuto {
		return "auto"
	}
	return string(b)
}

// MarshalText implements encoding.TextMarshaler.
func (b Backend) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses "auto" (or nothing) or the name of a registered
// backend, in any case; another name is an error that lists the
// registered ones.
func (b *Backend) UnmarshalText(text []byte) error {
	s := strings.ToLower(strings.TrimSpace(string(text)))
	if s == "" || s == "auto" {
		*b = BackendAuto
		return nil
	}
	names := driver.Backends()
	for _, n := range names {
		if n == s {
			*b = Backend(s)
			return nil
		}
	}
	return fmt.Errorf("%w: backend %q: want auto or a registered backend (%s); a backend registers when its package is imported, as rt/opencl and rt/cuda are",
		ErrInvalidArgument, s, strings.Join(names, ", "))
}

// marshal and unmarshal are the TextMarshaler and TextUnmarshaler of the
// enums with names.
func marshal[T any](v T, n enumNames, i int) ([]byte, error) {
	if i < 0 || i >= len(n) || n[i] == "" {
		return nil, fmt.Errorf("%w: %T(%d) has no name", ErrInvalidArgument, v, i)
	}
	return []byte(n[i]), nil
}

func unmarshal[T ~uint8](p *T, n enumNames, what string, b []byte) error {
	v, err := n.parse(what, strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	*p = T(v)
	return nil
}
