package driver

import (
	"errors"
	"fmt"
)

// Sentinel errors that a backend's errors wrap to say what a failure means.
// rt exports the same values, so applications test them through rt.
var (
	// ErrOutOfMemory reports that the device or the host ran out of memory
	// or resources.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrBuildFailed reports that a program did not compile or link; the
	// *Error that wraps it carries the build log.
	ErrBuildFailed = errors.New("program build failed")
	// ErrInvalidBinary reports program binaries that the device does not
	// accept.
	ErrInvalidBinary = errors.New("invalid program binary")
	// ErrNoKernel reports a kernel name that the program does not define.
	ErrNoKernel = errors.New("no such kernel")
	// ErrNoBackend reports that no backend is registered under the name
	// asked for.
	ErrNoBackend = errors.New("no backend registered")
	// ErrDeviceFault reports that a command faulted on the device (a
	// kernel wrote out of bounds, executed an illegal instruction, ...)
	// and the backend's context, or the device for the whole process,
	// cannot be used any more: the error of every call that the fault
	// makes fail wraps it, whichever call notices the fault first. A
	// backend wraps it only where its status code means a fault and
	// nothing else (rt/cuda: CUDA_ERROR_ILLEGAL_ADDRESS and the other
	// errors after which "any further CUDA work will return the same
	// error"); where a code may mean a fault or a plain failure, the
	// backend decides by the call and the state it can query, and says
	// how in its documentation.
	ErrDeviceFault = errors.New("device fault")
	// ErrInvalidArgument reports an argument that the backend refused as
	// invalid for the call: a kernel argument of the wrong size or kind
	// for its parameter (OpenCL's CL_INVALID_ARG_SIZE, ...).
	ErrInvalidArgument = errors.New("invalid argument")
)

// Error is an error returned by a backend call: the call, the backend's
// status code and its name, the build log where the call was a build, and
// the sentinel of this package that says what it means, if any.
type Error struct {
	// Call is the backend function that failed, for example "clBuildProgram".
	Call string
	// Code is the backend's status code, for example -11.
	Code int32
	// Name is the symbolic name of Code, for example "CL_BUILD_PROGRAM_FAILURE".
	Name string
	// Log is the build log, where the call was a build.
	Log string
	// Kind is the sentinel the error means (ErrOutOfMemory, ...), or nil.
	Kind error
}

// Error returns "call: NAME" followed by the build log, if any.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Call, e.Name)
	if e.Log != "" {
		s += ":\n" + e.Log
	}
	return s
}

// Unwrap returns the sentinel the error means, or nil.
func (e *Error) Unwrap() error { return e.Kind }
