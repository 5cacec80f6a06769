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
	// asked for; import rt/opencl to register the OpenCL backend.
	ErrNoBackend = driver.ErrNoBackend
	// ErrDeviceFault reports a fault of a command on the device: the
	// context that it poisoned returns its *DeviceFault from every call.
	ErrDeviceFault = driver.ErrDeviceFault
	// ErrClosed reports the use of a closed context, or of an object that
	// its context's Close released, or of a queue after its Release.
	ErrClosed = progcache.ErrClosed
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

// DeviceError is the backends' error, which rt names DeviceError.
type DeviceError = driver.Error

// DeviceFault and SuspectLaunch are rt/driver's, which rt aliases and
// documents: plain values that a context's error carries.
type (
	DeviceFault   = driver.DeviceFault
	SuspectLaunch = driver.SuspectLaunch
)
