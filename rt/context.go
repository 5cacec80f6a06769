package rt

import (
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/stats"
	"github.com/dgen-go/dgen/rt/trace"
)

// Context is an open backend context over one or more devices of one
// platform, with a default queue on its first device. It is safe for
// concurrent use. Close it when done.
type Context core.Context

// core returns c as the core's context.
func (c *Context) core() *core.Context { return (*core.Context)(c) }

// Open opens a context as the environment says: it is OpenConfig of
// ConfigFromEnv(os.Getenv), on the device that DGEN_DEVICE selects, by
// default the first GPU, else the first CPU device. A malformed variable
// fails it with an error that names the variable.
func Open() (*Context, error) {
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	return OpenConfig(cfg)
}

// OpenConfig opens a context as cfg says, and only as it says: it reads
// no DGEN_ variable, and a field left at its zero value has its documented
// default, whatever the environment holds (ConfigFromEnv reads that). It
// checks every setting first: a bad one fails it with an error wrapping
// ErrInvalidArgument that names the field.
func OpenConfig(cfg Config) (*Context, error) {
	c, err := core.OpenConfig(cfg.core())
	if err != nil {
		return nil, err
	}
	for _, d := range c.Devices() {
		d.Facade = newDevice(d)
	}
	return (*Context)(c), nil
}

// Close waits for every command enqueued on the context's queues, then
// releases everything the context made that is not yet released: buffers
// (from the allocators, held or in use, and from NewBuffer), views,
// images, pinned memory, events, graphs, kernels and programs, and the
// queues, then the context. It is safe to call while other goroutines use
// the context: it waits for the calls in progress, and every later call
// returns an error wrapping ErrClosed, but Free and Release of the
// context's objects, which return nil (Close released them). Close is
// idempotent; a nil Context is an error wrapping ErrInvalidArgument.
//
// Close of a context that recorded a device fault (Err), or that notices
// one as it finishes the queues, waits for no device work: it releases
// everything all the same, ignoring the errors that only repeat the
// fault, and returns one error, the fault's.
func (c *Context) Close() error { return c.core().Close() }

// Err returns nil while the context works. Once a device fault has been
// recorded it returns the *DeviceFault (errors.Is(err, ErrDeviceFault)),
// which every later call returns too, and Close. After Close without a
// fault it returns an error wrapping ErrClosed.
func (c *Context) Err() error { return c.core().Err() }

// Backend returns the name the context's backend is registered under ("cuda",
// "opencl"): the one Config.Backend named, or the one automatic selection
// chose.
func (c *Context) Backend() string { return c.core().Backend() }

// Devices returns the context's devices.
func (c *Context) Devices() []*Device {
	cd := c.core().Devices()
	if cd == nil {
		return nil
	}
	ds := make([]*Device, len(cd))
	for i, d := range cd {
		ds[i] = deviceOf(d)
	}
	return ds
}

// Queue returns the context's default queue, on its first device.
func (c *Context) Queue() *Queue { return (*Queue)(c.core().Queue()) }

// NewQueue creates an in-order queue on dev, which must be one of the
// context's devices. The context releases it on Close.
func (c *Context) NewQueue(dev *Device) (*Queue, error) {
	q, err := c.core().NewQueue(dev.core())
	return (*Queue)(q), err
}

// AcquireQueue returns a queue on the context's first device for the
// caller's use until it gives it back with ReleaseQueue: the way for a
// goroutine that lives for one request (a server's handler) to launch
// with no queue of its own and without ordering its commands behind every
// other request's on one shared queue.
//
//	q, err := ctx.AcquireQueue()
//	if err != nil {
//		return err
//	}
//	defer ctx.ReleaseQueue(q)
//	// allocate, launch and read on q
//
// The queue comes from the context's pool: one that no goroutine holds,
// else a new one while the pool has fewer than Config.QueuePool
// (at least 16 by default), else the one that the fewest goroutines hold,
// shared. AcquireQueue never waits. A request's commands on its queue run
// in order, as on any queue; the next request to get the queue finds them
// enqueued before its own. The context releases the pool's queues on
// Close.
func (c *Context) AcquireQueue() (*Queue, error) {
	q, err := c.core().AcquireQueue()
	return (*Queue)(q), err
}

// ReleaseQueue gives back a queue that AcquireQueue returned, for another
// goroutine to acquire; the caller must not use it afterwards. A queue
// that is not the pool's, or that was released more often than acquired,
// is an error wrapping ErrInvalidArgument.
func (c *Context) ReleaseQueue(q *Queue) error { return c.core().ReleaseQueue(q.core()) }

// ReleaseHeld gives every block held in the allocators' free lists back to
// the driver. Buffers in use are not affected.
func (c *Context) ReleaseHeld() error { return c.core().ReleaseHeld() }

// Stats returns the context's statistics: what its program cache did
// (Cache) and what its allocators hold and did (Alloc). It works after
// Close too, and on a nil context returns zero statistics.
func (c *Context) Stats() stats.Context { return c.core().Stats() }

// Tracer returns the context's tracer. Subscribe to it to receive the
// context's trace events, and mark ranges of Go code with its Range and
// Mark methods. Device times are reported only when the context was opened
// with tracing configured (Config.Trace or Config.Tracer) and device-time
// sampling above 0, since queues profile only then.
func (c *Context) Tracer() *trace.Tracer { return c.core().Tracer() }

// Device is a device of an open context, as its backend describes it.
// Its fields are for reading. A context's Devices, and its queues'
// Device, return the same *Device for each device.
type Device struct {
	Name     string
	Vendor   string
	Type     DeviceType
	Platform string // the platform's name, which names the backend's driver
	// Version is the device's OpenCL version ("OpenCL 3.0 CUDA"),
	// DriverVersion its driver's, OpenCLCVersion its compiler's.
	Version, DriverVersion, OpenCLCVersion string
	// GlobalMemSize is the device's memory in bytes, MaxAllocSize the
	// largest buffer, LocalMemSize the local memory of a work-group.
	GlobalMemSize, MaxAllocSize, LocalMemSize int64
	// MemBaseAddrAlign is the alignment in bytes of a view's offset
	// (Buffer.View) on this device.
	MemBaseAddrAlign int64
	ComputeUnits     int
	MaxWorkGroupSize int
	Extensions       []string

	d *core.Device
}

// newDevice returns the Device of d.
func newDevice(d *core.Device) *Device {
	return &Device{
		Name: d.Name, Vendor: d.Vendor, Type: DeviceType(d.Type), Platform: d.Platform,
		Version: d.Version, DriverVersion: d.DriverVersion, OpenCLCVersion: d.OpenCLCVersion,
		GlobalMemSize: d.GlobalMemSize, MaxAllocSize: d.MaxAllocSize, LocalMemSize: d.LocalMemSize,
		MemBaseAddrAlign: d.MemBaseAddrAlign, ComputeUnits: d.ComputeUnits, MaxWorkGroupSize: d.MaxWorkGroupSize,
		Extensions: d.Extensions, d: d,
	}
}

// deviceOf returns the Device of d, which OpenConfig made; nil for nil.
func deviceOf(d *core.Device) *Device {
	if d == nil {
		return nil
	}
	dev, _ := d.Facade.(*Device)
	return dev
}

// core returns the core's device; nil for nil.
func (d *Device) core() *core.Device {
	if d == nil {
		return nil
	}
	return d.d
}

// String returns the device's name and platform, "NAME (PLATFORM)", as
// messages name it.
func (d *Device) String() string { return d.core().String() }

// Sentinel errors. Errors returned by rt wrap one of these where it applies,
// so that callers can test them with errors.Is.
var (
	// ErrOutOfMemory reports that the device or the host ran out of memory or
	// resources.
	ErrOutOfMemory = core.ErrOutOfMemory
	// ErrBuildFailed reports that a program did not compile or link; the
	// DeviceError that wraps it carries the build log.
	ErrBuildFailed = core.ErrBuildFailed
	// ErrNoKernel reports a kernel name that the program does not define.
	ErrNoKernel = core.ErrNoKernel
	// ErrFreed reports the use of a buffer after Free, or a second Free.
	ErrFreed = core.ErrFreed
	// ErrOutOfRange reports an offset or length outside a buffer or a
	// device global. Nothing is read or written.
	ErrOutOfRange = core.ErrOutOfRange
	// ErrNoDevice reports that no device matches the selection.
	ErrNoDevice = core.ErrNoDevice
	// ErrNoBackend reports that no backend is registered under the name
	// asked for; import rt/backends to register all of dgen's.
	ErrNoBackend = core.ErrNoBackend
	// ErrDeviceFault reports that a command faulted on the device (a
	// kernel wrote out of bounds, ...): the context is unusable, and every
	// call on it returns its *DeviceFault, which wraps ErrDeviceFault; so
	// does Open of the device on the backend that lost it, for the rest of
	// the process. See DeviceFault.
	ErrDeviceFault = core.ErrDeviceFault
	// ErrClosed reports the use of a closed context, or of an object that
	// its context's Close released.
	ErrClosed = core.ErrClosed
	// ErrReleased reports the use of an Event after its Release, while its
	// context is open: waiting for it, or passing it in a wait list.
	ErrReleased = core.ErrReleased
	// ErrInvalidArgument reports an argument that cannot be right whatever
	// the device says (a nil buffer, a zero-sized range, ...).
	ErrInvalidArgument = core.ErrInvalidArgument
	// ErrNotGenerated reports a declaration that dgen has not registered:
	// its package needs `go generate`.
	ErrNotGenerated = core.ErrNotGenerated
	// ErrStale reports a program whose source files changed after go
	// generate read them: the device image in the build is old. The error
	// names the file; run go generate.
	ErrStale = core.ErrStale
)

// DeviceError is the error a backend call returns: the backend function
// that failed (Call, "clBuildProgram"), its status code (Code, -11) and
// the code's name (Name, "CL_BUILD_PROGRAM_FAILURE"), the build log (Log)
// where the call was a build, and the sentinel it means (Kind,
// ErrOutOfMemory, ...), which it unwraps to. rt wraps it with the
// operation and subject; errors.As finds it. It is package rt/driver's
// Error, which the backends return, so its fields are documented there.
type DeviceError = driver.Error

// DeviceFault is the error of a context whose device faulted: a kernel
// wrote out of bounds, executed an illegal instruction, or the device
// reported another error after which the backend's context cannot be
// used (CUDA's "sticky" errors; NVIDIA OpenCL's lost queue). errors.Is(err,
// ErrDeviceFault) reports it; errors.As gives the DeviceFault.
//
// The first call that notices the fault (often not the launch that caused
// it: a device reports a fault at the next call that synchronises) records
// it on the context, once, with the launches that were in flight; from then
// on every call on the context returns it at once, without a driver call,
// and Context.Err reports it. Close the context: Close releases what it
// holds without waiting for the device and returns the fault.
//
// Neither NVIDIA backend recovers a faulted device in the same process
// (measured on an H200, driver 580: CUDA's primary context cannot be
// retained again after cuDevicePrimaryCtxReset, NVIDIA's OpenCL refuses
// every new context), but each backend's fault is its own: Open refuses
// the device on the backend that lost it with an error wrapping
// ErrDeviceFault that says to restart the process, and with
// Config.Backend left to automatic selection opens it on the other
// backend, logging a warning. Contexts on other devices go on working.
// The README's "After a device fault" tells what each backend can do.
//
// To find the launch that faulted, set Config.SyncLaunches
// (DGEN_SYNC_LAUNCHES=1): launches are then serialised and synchronised,
// and Launches names the one that faulted with the Go line that enqueued
// it. It is package rt/driver's DeviceFault, so its fields are documented
// there.
type DeviceFault = driver.DeviceFault

// SuspectLaunch is a launch that was in flight when a device fault was
// noticed: its queue, kernel and program, and under Config.SyncLaunches
// the Go line that enqueued it.
type SuspectLaunch = driver.SuspectLaunch
