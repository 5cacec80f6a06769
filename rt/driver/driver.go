// Package driver defines the interfaces that a dgen backend implements,
// in the manner of database/sql/driver: rt/opencl implements them and
// registers itself; applications use package rt and never this one.
//
// A backend is mechanism only. It translates its own status codes into
// errors that wrap the sentinels of this package (ErrOutOfMemory,
// ErrBuildFailed, ...), so that rt gives them a meaning without knowing any
// backend's code numbers.
package driver

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

// Backend is the device mechanism beneath rt: it lists devices and opens
// contexts on them. It makes no decisions; rt does. rt/opencl provides the
// OpenCL backend and registers it under the name "opencl".
type Backend interface {
	// Platforms lists every platform with its devices.
	Platforms() ([]PlatformInfo, error)
	// NewContext opens a driver context over devices, which all belong to
	// one platform.
	NewContext(devices []DeviceInfo) (Context, error)
}

// Context is a backend context over one or more devices. Device
// indices in its methods index the devices it was opened with.
type Context interface {
	// NewQueue creates an in-order queue on device dev.
	NewQueue(dev int, profiling bool) (Queue, error)
	// NewBuffer allocates size bytes of device memory, readable and
	// writable by kernels.
	NewBuffer(size int64) (Buffer, error)
	// BuildProgram compiles and links source for every device of the
	// context. A failed build returns an *Error that wraps ErrBuildFailed and carries the log.
	BuildProgram(source, options string) (Program, error)
	// LoadProgram creates a program from binaries, one per device in
	// device order, as returned by Program.Binaries, and builds it.
	LoadProgram(binaries [][]byte, options string) (Program, error)
	// Release releases the context.
	Release() error
}

// A KernelTimer is a Context that can time every kernel of a queue at less
// cost than a profiling queue's events: the runtime asks for such a queue
// when tracing reports the device times of every command. Its events are
// Spanners whose times may come later than their completion: Span reports
// done false until they have come, and the queue's Finish, or Wait on the
// event, makes them come.
type KernelTimer interface {
	// NewKernelTimedQueue creates a profiling queue on device dev whose
	// kernels are timed the backend's cheaper way. Where that way is not
	// available, its error wraps errors.ErrUnsupported, and the runtime
	// makes a profiling queue instead.
	NewKernelTimedQueue(dev int) (Queue, error)
}

// A KernelTimedQueue is a queue of a KernelTimer that can time a kernel
// without the event it records for other uses.
type KernelTimedQueue interface {
	// LaunchArgsTimed is ArgLauncher's LaunchArgs with an event that the
	// runtime wants only for the kernel's device times: the Event it
	// returns is a Spanner, no other command may wait for it, and its Wait
	// may wait for the whole queue.
	LaunchArgsTimed(k Kernel, a *Args, r *NDRange, wait []Event) (Event, error)
}

// A LineInfoContext is a Context whose programs can carry the line
// information of their source, which the vendor's debugging tools report
// (compute-sanitizer names the line of a faulting access). rt adds
// LineInfoOptions to the options of every program it builds where the
// application asks for debugging (rt.Config.SyncLaunches); the options
// are part of every cache key, so such programs are cached apart.
type LineInfoContext interface {
	// LineInfoOptions returns the build options that add line
	// information, in the backend's own spelling.
	LineInfoOptions() string
}

// Queue is an in-order command queue on one device. Its methods are
// safe for concurrent use. Enqueue methods return an event the caller
// releases; wait lists may be empty.
type Queue interface {
	// EnqueueKernel launches k over r after wait.
	EnqueueKernel(k Kernel, r NDRange, wait []Event) (Event, error)
	// SubmitKernel launches k over r after wait without creating an event,
	// which on some drivers costs as much as the launch itself.
	SubmitKernel(k Kernel, r NDRange, wait []Event) error
	// ReadBuffer copies size bytes at offset of b to dst. When blocking is
	// false, dst must stay valid and unmoved until the event completes.
	// A blocking transfer creates no event and returns nil.
	ReadBuffer(b Buffer, blocking bool, offset, size int64, dst unsafe.Pointer, wait []Event) (Event, error)
	// WriteBuffer copies size bytes from src to offset of b. When blocking
	// is false, src must stay valid and unmoved until the event completes.
	// A blocking transfer creates no event and returns nil.
	WriteBuffer(b Buffer, blocking bool, offset, size int64, src unsafe.Pointer, wait []Event) (Event, error)
	// FillBuffer repeats pattern over size bytes at offset of b.
	FillBuffer(b Buffer, pattern []byte, offset, size int64, wait []Event) (Event, error)
	// CopyBuffer copies size bytes from src at srcOffset to dst at dstOffset.
	CopyBuffer(src, dst Buffer, srcOffset, dstOffset, size int64, wait []Event) (Event, error)
	// Marker enqueues a command that completes when wait (or, if empty,
	// everything enqueued before it) has completed.
	Marker(wait []Event) (Event, error)
	// Flush submits enqueued commands to the device.
	Flush() error
	// Finish blocks until every enqueued command has completed.
	Finish() error
	// Release releases the queue.
	Release() error
}

// A SubmitQueue is a Queue that enqueues fills and copies without
// creating an event, as SubmitKernel launches: rt calls it for the
// commands whose events nobody asked for (Buffer.Fill, Buffer.CopyTo).
// Without it rt takes FillBuffer's and CopyBuffer's events and releases
// them.
type SubmitQueue interface {
	// SubmitFill is FillBuffer without an event.
	SubmitFill(b Buffer, pattern []byte, offset, size int64, wait []Event) error
	// SubmitCopy is CopyBuffer without an event.
	SubmitCopy(src, dst Buffer, srcOffset, dstOffset, size int64, wait []Event) error
}

// Buffer is a region of device memory.
type Buffer interface {
	// Release releases the memory. Commands enqueued before it may still
	// use it: the memory is used again only once they have completed
	// (OpenCL's clReleaseMemObject, after markers on the context's queues
	// on NVIDIA's platform; rt/cuda's stream-ordered free). It waits for
	// no command.
	Release() error
}

// Program is a program built for the devices of its context.
type Program interface {
	// Binaries returns the built program for each device, in device order.
	Binaries() ([][]byte, error)
	// KernelNames lists the kernels that the program defines.
	KernelNames() ([]string, error)
	// NewKernel creates a kernel object for the kernel called name.
	NewKernel(name string) (Kernel, error)
	// Release releases the program.
	Release() error
}

// Kernel is a kernel object with its argument values. Setting
// arguments mutates it: it must not be used by two goroutines at once.
type Kernel interface {
	// SetArgBuffer sets argument i to buffer b.
	SetArgBuffer(i int, b Buffer) error
	// SetArgScalar sets argument i to the first size bytes (size <= 8) of
	// v in the machine's byte order.
	SetArgScalar(i int, size uintptr, v uint64) error
	// SetArgBytes sets argument i to size bytes at p.
	SetArgBytes(i int, size uintptr, p unsafe.Pointer) error
	// SetArgLocal sets argument i to size bytes of local memory.
	SetArgLocal(i int, size uintptr) error
	// NumArgs returns the number of arguments the kernel takes.
	NumArgs() (int, error)
	// WorkGroupInfo returns the kernel's work-group limits on the device
	// whose DeviceInfo.Handle is device.
	WorkGroupInfo(device uintptr) (KernelWorkGroupInfo, error)
	// Release releases the kernel object.
	Release() error
}

// KernelWorkGroupInfo are a kernel's work-group limits on one device.
type KernelWorkGroupInfo struct {
	// WorkGroupSize is the largest work-group the kernel can run in on
	// the device (CL_KERNEL_WORK_GROUP_SIZE), at most the device's
	// MaxWorkGroupSize.
	WorkGroupSize int
	// PreferredMultiple is the work-group size multiple that performs best
	// (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE).
	PreferredMultiple int
	// LocalMemSize is the local memory the kernel uses, in bytes
	// (CL_KERNEL_LOCAL_MEM_SIZE): its __local variables, and its __local
	// arguments as set when it was asked.
	LocalMemSize int64
	// PrivateMemSize is the private memory each work-item uses, in bytes
	// (CL_KERNEL_PRIVATE_MEM_SIZE).
	PrivateMemSize int64
	// CompileWorkGroupSize is the work-group size that the kernel's
	// reqd_work_group_size attribute demands, or zeros where it has none
	// or the backend does not say (CL_KERNEL_COMPILE_WORK_GROUP_SIZE).
	CompileWorkGroupSize [3]int
}

// Event is the completion status of one enqueued command.
type Event interface {
	// Wait blocks until the command has completed; it returns an error
	// when the command failed.
	Wait() error
	// Status returns the command's execution status.
	Status() (EventStatus, error)
	// Profile returns the device timestamps of the command in nanoseconds;
	// the queue must have been created with profiling on.
	Profile() (Timing, error)
	// Release releases the event.
	Release() error
}

// A Spanner is an Event that reports its command's device times without
// blocking, in one call: what device-time tracing asks of every sampled
// command, where Status and Profile take a call each and Profile reads four
// timestamps. Backends implement it where that saves driver calls; the
// runtime falls back on Status and Profile.
type Spanner interface {
	// Span returns, once the command has completed, done true and its
	// start and end times in nanoseconds of the device's clock (Timing's
	// Started and Ended); while it has not, done false at once. A failed
	// command gives done true and its error.
	Span() (started, ended uint64, done bool, err error)
}

// EventStatus is the execution status of a command.
type EventStatus int

// Execution statuses, in the order a command passes through them.
const (
	StatusComplete EventStatus = iota
	StatusRunning
	StatusSubmitted
	StatusQueued
)

func (s EventStatus) String() string {
	switch s {
	case StatusComplete:
		return "complete"
	case StatusRunning:
		return "running"
	case StatusSubmitted:
		return "submitted"
	case StatusQueued:
		return "queued"
	}
	return fmt.Sprintf("EventStatus(%d)", int(s))
}

// Timing holds the device timestamps of a command, in nanoseconds of the
// device's clock.
type Timing struct {
	Queued, Submitted, Started, Ended uint64
}

// PlatformInfo describes a platform and its devices.
type PlatformInfo struct {
	Index   int
	Name    string
	Vendor  string
	Version string
	Devices []DeviceInfo
}

// DeviceType is the kind of a device.
type DeviceType int

// Device kinds.
const (
	DeviceOther DeviceType = iota
	DeviceCPU
	DeviceGPU
	DeviceAccelerator
)

func (t DeviceType) String() string {
	switch t {
	case DeviceCPU:
		return "cpu"
	case DeviceGPU:
		return "gpu"
	case DeviceAccelerator:
		return "accelerator"
	}
	return "other"
}

// DeviceInfo describes a device.
type DeviceInfo struct {
	// PlatformIndex and Index locate the device: Index counts the
	// platform's devices from 0.
	PlatformIndex, Index int
	Platform             string // platform name
	PlatformVersion      string
	Name                 string
	Vendor               string
	Type                 DeviceType
	Version              string // device version, "OpenCL 3.0 CUDA"
	DriverVersion        string
	OpenCLCVersion       string
	GlobalMemSize        int64
	MaxAllocSize         int64
	ComputeUnits         int
	MaxWorkGroupSize     int
	LocalMemSize         int64 // bytes of local memory per work-group (CL_DEVICE_LOCAL_MEM_SIZE)
	MemBaseAddrAlign     int64 // bytes to which a sub-buffer's offset is aligned (CL_DEVICE_MEM_BASE_ADDR_ALIGN, which OpenCL gives in bits)
	Extensions           []string
	// MaxWorkItemSizes is the largest work-group size in each dimension
	// (CL_DEVICE_MAX_WORK_ITEM_SIZES; CUDA's largest block); 0 where the
	// backend does not know it.
	MaxWorkItemSizes [3]int64
	// MaxGroups is the most work-groups one launch may have in each
	// dimension, and MaxGroupsTotal the most in all, as the device or the
	// backend's scheduler can count them (a CUDA grid: 2^31-1, 65535 and
	// 65535 blocks; PoCL numbers work-groups with 32-bit integers, so at
	// most 2^32-1 in all); 0 where the backend sets no limit. rt checks
	// every launch against them before the driver sees it.
	MaxGroups      [3]int64
	MaxGroupsTotal int64
	// Images are the largest images the device makes.
	Images ImageLimits
	// Handle is the backend's own device handle.
	Handle uintptr
}

// ImageLimits are the largest images a device makes, in pixels (in layers
// for Layers), as OpenCL's CL_DEVICE_IMAGE2D_MAX_WIDTH and its kin report
// them (CUDA's surfaces on rt/cuda); 0 where the device makes none, or the
// backend does not say.
type ImageLimits struct {
	Width1D                    int64 // a 1-D image, and a 1-D image array's width
	Width2D, Height2D          int64 // a 2-D image, and a 2-D image array's
	Width3D, Height3D, Depth3D int64
	Layers                     int64 // of an image array
	Buffer                     int64 // an image over a buffer (image1d_buffer_t)
}

// Label returns the device's name and platform for messages.
func (d DeviceInfo) Label() string { return fmt.Sprintf("%s (%s)", d.Name, d.Platform) }

var backends struct {
	sync.RWMutex
	m map[string]Backend
}

// Register makes a backend available under name. It is called from the
// init function of a backend package such as rt/opencl; registering a name
// twice panics, as database/sql does, since it is a programming error.
func Register(name string, b Backend) {
	backends.Lock()
	defer backends.Unlock()
	if b == nil {
		panic("driver: Register backend is nil")
	}
	if _, dup := backends.m[name]; dup {
		panic("driver: Register called twice for backend " + name)
	}
	if backends.m == nil {
		backends.m = make(map[string]Backend)
	}
	backends.m[name] = b
}

// Backends returns the names of the registered backends, sorted.
func Backends() []string {
	backends.RLock()
	defer backends.RUnlock()
	names := make([]string, 0, len(backends.m))
	for n := range backends.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the backend registered under name, "" meaning "opencl".
// The error wraps ErrNoBackend when there is none.
func Lookup(name string) (Backend, error) {
	backends.RLock()
	defer backends.RUnlock()
	if name == "" {
		name = "opencl"
	}
	b, ok := backends.m[name]
	if !ok {
		return nil, fmt.Errorf("open backend %q: %w (import github.com/dgen-go/dgen/rt/%s)", name, ErrNoBackend, name)
	}
	return b, nil
}

// NDRange is the index space of a kernel launch: the global size in Dims
// dimensions and the work-group size, all zero when the device chooses.
// rt checks it before a backend sees it.
type NDRange struct {
	Dims   int
	Global [3]int
	Local  [3]int
	// Offset is the global work offset (get_global_offset), all zero for
	// none. A backend that cannot launch with an offset returns an error
	// wrapping errors.ErrUnsupported.
	Offset [3]int
}
