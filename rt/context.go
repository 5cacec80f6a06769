package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Context is an open backend context over one or more devices of one
// platform, with a default queue on its first device. It is safe for
// concurrent use. Close it when done.
type Context = core.Context

// Open opens a context as the environment says (ConfigFromEnv): on the
// device that DGEN_DEVICE selects, by default the first GPU, else the
// first CPU device. It is OpenConfig(Config{}).
func Open() (*Context, error) {
	return core.Open()
}

// OpenConfig opens a context as cfg says, with the fields that cfg leaves
// at their zero value filled from the environment (ConfigFromEnv): a field
// that cfg sets wins over its DGEN_ variable.
func OpenConfig(cfg Config) (*Context, error) {
	return core.OpenConfig(cfg)
}

// Device is a device of an open context, as its backend describes it.
// Its fields are for reading.
type Device = core.Device

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
	// asked for; import rt/opencl to register the OpenCL backend.
	ErrNoBackend = core.ErrNoBackend
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

// DeviceError is the error a backend call returns: the call, the
// backend's status code and name, and the build log where the call was a
// build. rt wraps it with the operation and subject; errors.As finds it.
type DeviceError = core.DeviceError
