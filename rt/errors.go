package rt

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by rt wrap one of these where it applies,
// so that callers can test them with errors.Is.
var (
	// ErrOutOfMemory reports that the device or the host ran out of memory or
	// resources (CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
	// CL_OUT_OF_HOST_MEMORY).
	ErrOutOfMemory = errors.New("out of memory")
	// ErrBuildFailed reports that a program did not compile or link; the
	// DeviceError that wraps it carries the build log.
	ErrBuildFailed = errors.New("program build failed")
	// ErrNoKernel reports a kernel name that the program does not define.
	ErrNoKernel = errors.New("no such kernel")
	// ErrFreed reports the use of a buffer after Free, or a second Free.
	ErrFreed = errors.New("buffer already freed")
	// ErrOutOfRange reports an offset or length outside a buffer or a
	// device global. Nothing is read or written.
	ErrOutOfRange = errors.New("out of range")
	// ErrNoDevice reports that no device matches the selection.
	ErrNoDevice = errors.New("no matching device")
	// ErrNoBackend reports that no backend is registered under the name
	// asked for; import rt/opencl to register the OpenCL backend.
	ErrNoBackend = errors.New("no backend registered")
	// ErrClosed reports the use of a closed context or released object.
	ErrClosed = errors.New("closed")
	// ErrInvalidArgument reports an argument that cannot be right whatever
	// the device says (a nil buffer, a zero-sized range, ...).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotGenerated reports a declaration that dgen has not registered:
	// its package needs `go generate`.
	ErrNotGenerated = errors.New("declaration not registered: run go generate")
)

// DeviceError is an error returned by a backend call. Backends translate
// their status codes into it; rt wraps it with the operation and subject.
type DeviceError struct {
	// Call is the backend function that failed, for example "clBuildProgram".
	Call string
	// Code is the backend's status code, for example -11.
	Code int32
	// Name is the symbolic name of Code, for example "CL_BUILD_PROGRAM_FAILURE".
	Name string
	// Log is the build log, where the call was a build.
	Log string
}

// Error returns "call: NAME" followed by the build log, if any.
func (e *DeviceError) Error() string {
	s := fmt.Sprintf("%s: %s", e.Call, e.Name)
	if e.Log != "" {
		s += ":\n" + e.Log
	}
	return s
}

// OpenCL status codes that rt gives a meaning to. Other backends map their
// own failures onto these.
const (
	codeMemAllocFailure  = -4
	codeOutOfResources   = -5
	codeOutOfHostMemory  = -6
	codeBuildFailure     = -11
	codeCompileFailure   = -15
	codeLinkFailure      = -17
	codeInvalidKernelNam = -46
)

// Is reports whether the device error means target: ErrOutOfMemory,
// ErrBuildFailed or ErrNoKernel.
func (e *DeviceError) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return e.Code == codeMemAllocFailure || e.Code == codeOutOfResources || e.Code == codeOutOfHostMemory
	case ErrBuildFailed:
		return e.Code == codeBuildFailure || e.Code == codeCompileFailure || e.Code == codeLinkFailure
	case ErrNoKernel:
		return e.Code == codeInvalidKernelNam
	}
	return false
}
