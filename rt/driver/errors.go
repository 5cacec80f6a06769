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
