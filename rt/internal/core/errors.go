package core

import (
	"errors"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// Sentinel errors. Errors returned by rt wrap one of these where it applies,
// so that callers can test them with errors.Is.
var (
	// ErrOutOfMemory reports that the device or the host ran out of memory or
	// resources.
	ErrOutOfMemory = driver.ErrOutOfMemory
	// ErrBuildFailed reports that a program did not compile or link; the
	// DeviceError that wraps it carries the build log.
	ErrBuildFailed = driver.ErrBuildFailed
	// ErrNoKernel reports a kernel name that the program does not define.
	ErrNoKernel = driver.ErrNoKernel
	// ErrFreed reports the use of a buffer after Free, or a second Free.
	ErrFreed = errors.New("buffer already freed")
	// ErrOutOfRange reports an offset or length outside a buffer or a
	// device global. Nothing is read or written.
	ErrOutOfRange = errors.New("out of range")
	// ErrTooLarge reports an allocation above the device's maximum single
	// allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE). No driver call is made.
	ErrTooLarge = alloc.ErrTooLarge
	// ErrNoDevice reports that no device matches the selection.
	ErrNoDevice = devsel.ErrNoDevice
	// ErrNoBackend reports that no backend is registered under the name
	// asked for; import rt/backends to register all of dgen's.
	ErrNoBackend = driver.ErrNoBackend
	// ErrDeviceFault reports that a command faulted on the device (a
	// kernel wrote out of bounds, ...): the context is unusable, and every
	// call on it returns its *DeviceFault, which wraps ErrDeviceFault; so
	// does Open of the device on the backend that lost it, for the rest of
	// the process. See DeviceFault.
	ErrDeviceFault = driver.ErrDeviceFault
	// ErrClosed reports the use of a closed context, or of an object that
	// its context's Close released.
	ErrClosed = progcache.ErrClosed
	// ErrShuttingDown reports a call that a context refuses once its
	// Shutdown has begun: acquiring or making a queue, or a call on a
	// queue that the pool did not hand out before. It is not ErrClosed:
	// the context still serves the queues acquired before, and ErrClosed
	// follows once Shutdown has closed it.
	ErrShuttingDown = errors.New("shutting down")
	// ErrMemoryLimit reports an allocation that would take the bytes the
	// context holds on a device past Config.MemoryLimit. Errors that wrap
	// it wrap ErrOutOfMemory too, so that code that sheds load when the
	// device is out of memory does so at the limit.
	ErrMemoryLimit = errors.New("device memory limit reached")
	// ErrReleased reports the use of an Event after its Release, while its
	// context is open: waiting for it, or passing it in a wait list.
	ErrReleased = errors.New("event released")
	// ErrInvalidArgument reports an argument that cannot be right whatever
	// the device says (a nil buffer, a zero-sized range, ...).
	ErrInvalidArgument = progcache.ErrInvalidArgument
	// ErrNotGenerated reports a declaration that dgen has not registered:
	// its package needs `go generate`.
	ErrNotGenerated = desc.ErrNotGenerated
	// ErrStale reports a program whose source files changed after go
	// generate read them: the device image in the build is old. The error
	// names the file; run go generate.
	ErrStale = desc.ErrStale
)

// DeviceError is the error a backend call returns: the backend function
// that failed (Call, "clBuildProgram"), its status code (Code, -11) and
// the code's name (Name, "CL_BUILD_PROGRAM_FAILURE"), the build log (Log)
// where the call was a build, and the sentinel it means (Kind,
// ErrOutOfMemory, ...), which it unwraps to. rt wraps it with the
// operation and subject; errors.As finds it. It is package rt/driver's
// Error, which the backends return, so its fields are documented there.
type DeviceError = driver.Error

// DeviceFault and SuspectLaunch are rt/driver's, which rt aliases and
// documents: plain values that a context's error carries.
type (
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
	DeviceFault = driver.DeviceFault
	// SuspectLaunch is a launch that was in flight when a device fault was
	// noticed: its queue, kernel and program, and under Config.SyncLaunches
	// the Go line that enqueued it.
	SuspectLaunch = driver.SuspectLaunch
)
