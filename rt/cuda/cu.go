package cuda

/*
// The CUDA driver API is declared in dgen_cu.h, written for dgen so that
// no CUDA header is needed to build; libcuda.so.1 is opened with dlopen and
// each function found with dlsym under the name cuda.h maps it to (the _v2
// names where there are some). Every call that needs a current context
// goes through a wrapper of dgen_cu.c that makes the context current first,
// so that one cgo call does one operation whatever OS thread the goroutine
// runs on.
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// ErrNoDriver reports that CUDA's driver is not usable here: libcuda.so.1
// does not load, is too old, or lacks a function dgen calls.
var ErrNoDriver = errors.New("CUDA driver not available")

// minDriverVersion is the oldest driver API dgen's calls need: 11.0, for
// cuDevicePrimaryCtxRelease_v2 (cuDriverGetVersion's encoding, 1000*major + 10*minor).
const minDriverVersion = 11000

// libName is the library the backend opens: libcuda.so.1, unless
// rt.Config.CUDALibrary (DGEN_CUDA_LIBRARY) names another (a path, for a
// driver outside the loader's path, or to test its absence), which rt
// passes in driver.Options.
func libName() string {
	if v := driver.Configured().CUDALibrary; v != "" {
		return v
	}
	return "libcuda.so.1"
}

// lib is libcuda as loaded once per process.
var lib struct {
	once    sync.Once
	err     error
	version int
}

// load opens libcuda, finds every function dgen calls and initialises the
// driver, once; its error wraps ErrNoDriver and says what is missing.
func load() error {
	lib.once.Do(func() { lib.version, lib.err = open(libName(), dlopen) })
	return lib.err
}

// symbols opens a library and finds its functions: dlopen, or a fake in
// tests of what a missing or old driver does.
type symbols interface {
	open(name string) error
	sym(i int) bool
	init() (version int, code cuCode)
}

// cuCode is a CUresult, named for code without cgo (tests).
type cuCode = C.CUresult

type dlLib struct{}

var dlopen symbols = dlLib{}

func (dlLib) open(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	if msg := C.dgen_cu_open(cname); msg != nil {
		return errors.New(C.GoString(msg))
	}
	return nil
}

func (dlLib) sym(i int) bool { return C.dgen_cu_sym(C.int(i)) != 0 }

func (dlLib) init() (int, cuCode) {
	var v C.int
	r := C.dgen_init(&v)
	return int(v), r
}

// symbolName returns the name of the i-th function dgen loads.
func symbolName(i int) string { return C.GoString(C.dgen_cu_name(C.int(i))) }

// open loads name through s: an error names the library, the missing
// functions and the driver API version found.
func open(name string, s symbols) (int, error) {
	if err := s.open(name); err != nil {
		return 0, fmt.Errorf("%w: %s does not load (%v): the CUDA backend needs NVIDIA's driver; DGEN_BACKEND=opencl runs on other devices", ErrNoDriver, name, err)
	}
	var missing []string
	for i := range int(C.dgen_cu_count()) {
		if !s.sym(i) {
			missing = append(missing, symbolName(i))
		}
	}
	if len(missing) > 0 {
		return 0, fmt.Errorf("%w: %s lacks %s: the CUDA backend needs driver API %s or later", ErrNoDriver, name, strings.Join(missing, ", "), versionString(minDriverVersion))
	}
	v, r := s.init()
	if r != 0 {
		return 0, fmt.Errorf("%w: cuInit: %v", ErrNoDriver, cuError("cuInit", r))
	}
	if v < minDriverVersion {
		return v, fmt.Errorf("%w: %s is driver API %s; the CUDA backend needs %s or later", ErrNoDriver, name, versionString(v), versionString(minDriverVersion))
	}
	return v, nil
}

// versionString formats cuDriverGetVersion's number: 13000 is "13.0".
func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// CUDA result codes that mean one of rt/driver's sentinels.
//
// The device faults are the codes that cuda.h documents as poisoning the
// context or the process: "This leaves the process in an inconsistent
// state and any further CUDA work will return the same error. To continue
// using CUDA, the process must be terminated and relaunched" (illegal
// address and instruction, misaligned address, invalid address space,
// invalid PC, hardware stack error, launch failure, launch timeout, tensor
// memory leak, contained error, external device, MPS client terminated),
// a device-side assert ("the context cannot be used anymore"), and an
// uncorrectable ECC error. Measured on an H200 (driver 580): after
// CUDA_ERROR_ILLEGAL_ADDRESS, cuDevicePrimaryCtxReset succeeds and every
// later cuDevicePrimaryCtxRetain or cuCtxCreate on the device fails with
// the same code, so rt refuses the device on this backend for the rest of
// the process. CUDA_ERROR_UNKNOWN is left out: it is not documented as
// sticky.
var codeKinds = map[C.CUresult]error{
	2:   driver.ErrOutOfMemory,   // CUDA_ERROR_OUT_OF_MEMORY
	701: driver.ErrOutOfMemory,   // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	200: driver.ErrInvalidBinary, // CUDA_ERROR_INVALID_IMAGE
	209: driver.ErrInvalidBinary, // CUDA_ERROR_NO_BINARY_FOR_GPU
	218: driver.ErrInvalidBinary, // CUDA_ERROR_INVALID_PTX
	222: driver.ErrInvalidBinary, // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
	500: driver.ErrNoKernel,      // CUDA_ERROR_NOT_FOUND
	214: driver.ErrDeviceFault,   // CUDA_ERROR_ECC_UNCORRECTABLE
	226: driver.ErrDeviceFault,   // CUDA_ERROR_CONTAINED
	700: driver.ErrDeviceFault,   // CUDA_ERROR_ILLEGAL_ADDRESS
	702: driver.ErrDeviceFault,   // CUDA_ERROR_LAUNCH_TIMEOUT
	710: driver.ErrDeviceFault,   // CUDA_ERROR_ASSERT
	714: driver.ErrDeviceFault,   // CUDA_ERROR_HARDWARE_STACK_ERROR
	715: driver.ErrDeviceFault,   // CUDA_ERROR_ILLEGAL_INSTRUCTION
	716: driver.ErrDeviceFault,   // CUDA_ERROR_MISALIGNED_ADDRESS
	717: driver.ErrDeviceFault,   // CUDA_ERROR_INVALID_ADDRESS_SPACE
	718: driver.ErrDeviceFault,   // CUDA_ERROR_INVALID_PC
	719: driver.ErrDeviceFault,   // CUDA_ERROR_LAUNCH_FAILED
	721: driver.ErrDeviceFault,   // CUDA_ERROR_TENSOR_MEMORY_LEAK
	810: driver.ErrDeviceFault,   // CUDA_ERROR_MPS_CLIENT_TERMINATED
	911: driver.ErrDeviceFault,   // CUDA_ERROR_EXTERNAL_DEVICE
}

// cuError returns the *driver.Error of a failed call, or nil for
// CUDA_SUCCESS.
func cuError(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	name := fmt.Sprintf("CUDA_ERROR(%d)", int(r))
	if s := C.dgen_err_name(r); s != nil {
		name = C.GoString(s)
	}
	if s := C.dgen_err_string(r); s != nil {
		name += " (" + C.GoString(s) + ")"
	}
	return &driver.Error{Call: call, Code: int32(r), Name: name, Kind: codeKinds[r]}
}

// stepCalls names the call that failed in a wrapper, by its step.
var stepCalls = [...]string{"cuCtxSetCurrent", "cuStreamWaitEvent", "cuEventRecord", "", "cuEventRecord", "cuStreamSynchronize", "cuEventSynchronize", "cuEventElapsedTime"}

// stepError returns the error of a wrapper that failed at step, op naming
// its operation.
func stepError(op string, step C.int, r C.CUresult) error {
	call := op
	if int(step) < len(stepCalls) && stepCalls[step] != "" {
		call = stepCalls[step]
	}
	return cuError(call, r)
}
