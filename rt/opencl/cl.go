// Package opencl is dgen's OpenCL backend: a thin cgo binding of the OpenCL
// 1.2 API, against the Khronos headers and the ICD loader, and the
// implementation of rt/driver over it. It translates and makes no
// decisions; policy lives in rt.
//
// Importing it registers the backend under the name "opencl":
//
//	import _ "github.com/dgen-go/dgen/rt/opencl"
//
// A failed build's error carries the driver's build log, with the user's
// file names and lines. The backend never redirects the process's file
// descriptors: on PoCL it asks clang to leave out the summary line ("2
// errors generated.") that it would otherwise write to standard error, and
// PoCL writes nothing else there unless POCL_DEBUG asks it to.
//
// With PoCL's kernel cache off (POCL_KERNEL_CACHE=0), PoCL 3.1 still links
// each kernel in its cache directory, and processes that load the same
// program at once abort there ("Final linking of kernel … failed"; pocl
// issues 430 and 1480). In that configuration each process therefore gets
// a PoCL directory of its own below POCL_CACHE_DIR (or PoCL's default,
// ~/.cache/pocl/kcache), named dgen-*, locked while the process lives and
// removed by a later process after it exits; child processes see
// POCL_CACHE_DIR as it was.
package opencl

/*
// Hot calls are marked noescape (their pointer arguments do not outlive
// the call, so Go need not move them to the heap) and nocallback (they
// never call back into Go). A blocking transfer goes through
// dgen_transfer; a non-blocking one through dgen_read_async and
// dgen_write_async, which are not noescape, since the device uses the host
// memory after the call returns.
#cgo CFLAGS: -DCL_TARGET_OPENCL_VERSION=120 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS
#cgo LDFLAGS: -lOpenCL
#cgo noescape clGetPlatformIDs
#cgo nocallback clGetPlatformIDs
#cgo noescape clGetDeviceIDs
#cgo nocallback clGetDeviceIDs
#cgo noescape clEnqueueNDRangeKernel
#cgo nocallback clEnqueueNDRangeKernel
#cgo noescape clEnqueueMarkerWithWaitList
#cgo nocallback clEnqueueMarkerWithWaitList
#cgo noescape clEnqueueCopyBuffer
#cgo nocallback clEnqueueCopyBuffer
#cgo noescape clEnqueueFillBuffer
#cgo nocallback clEnqueueFillBuffer
#cgo noescape clWaitForEvents
#cgo nocallback clWaitForEvents
#cgo noescape clGetEventInfo
#cgo nocallback clGetEventInfo
#cgo noescape dgen_times
#cgo nocallback dgen_nothing
#cgo nocallback dgen_times
#cgo noescape clCreateBuffer
#cgo nocallback clCreateBuffer
#cgo noescape clGetKernelInfo
#cgo nocallback clGetKernelInfo
#cgo noescape dgen_transfer
#cgo nocallback dgen_transfer
#cgo noescape clSetKernelArg
#cgo nocallback clSetKernelArg
#cgo noescape dgen_set_arg_scalar
#cgo nocallback dgen_set_arg_scalar
#cgo noescape dgen_set_arg_mem
#cgo nocallback dgen_set_arg_mem
#cgo noescape dgen_set_arg_local
#cgo nocallback dgen_set_arg_local
#cgo noescape clReleaseEvent
#cgo nocallback clReleaseEvent
#cgo noescape clFinish
#cgo nocallback clFinish
#cgo noescape clFlush
#cgo nocallback clFlush
#cgo noescape clReleaseMemObject
#cgo nocallback clReleaseMemObject
#cgo noescape clReleaseKernel
#cgo nocallback clReleaseKernel
#cgo noescape clReleaseCommandQueue
#cgo nocallback clReleaseCommandQueue
#include <stdlib.h>
#include "dgen_cl.h"
*/
import "C"

import (
	"fmt"

	"github.com/dgen-go/dgen/rt/driver"
)

// codeNames maps OpenCL 1.2 status codes to their names.
var codeNames = map[C.cl_int]string{
	0: "CL_SUCCESS", -1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE",
	-3: "CL_COMPILER_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	-5: "CL_OUT_OF_RESOURCES", -6: "CL_OUT_OF_HOST_MEMORY",
	-7: "CL_PROFILING_INFO_NOT_AVAILABLE", -8: "CL_MEM_COPY_OVERLAP",
	-9: "CL_IMAGE_FORMAT_MISMATCH", -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
	-11: "CL_BUILD_PROGRAM_FAILURE", -12: "CL_MAP_FAILURE",
	-13: "CL_MISALIGNED_SUB_BUFFER_OFFSET", -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	-15: "CL_COMPILE_PROGRAM_FAILURE", -16: "CL_LINKER_NOT_AVAILABLE",
	-17: "CL_LINK_PROGRAM_FAILURE", -18: "CL_DEVICE_PARTITION_FAILED",
	-19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
	-30: "CL_INVALID_VALUE", -31: "CL_INVALID_DEVICE_TYPE", -32: "CL_INVALID_PLATFORM",
	-33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT", -35: "CL_INVALID_QUEUE_PROPERTIES",
	-36: "CL_INVALID_COMMAND_QUEUE", -37: "CL_INVALID_HOST_PTR", -38: "CL_INVALID_MEM_OBJECT",
	-39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", -40: "CL_INVALID_IMAGE_SIZE",
	-41: "CL_INVALID_SAMPLER", -42: "CL_INVALID_BINARY", -43: "CL_INVALID_BUILD_OPTIONS",
	-44: "CL_INVALID_PROGRAM", -45: "CL_INVALID_PROGRAM_EXECUTABLE",
	-46: "CL_INVALID_KERNEL_NAME", -47: "CL_INVALID_KERNEL_DEFINITION",
	-48: "CL_INVALID_KERNEL", -49: "CL_INVALID_ARG_INDEX", -50: "CL_INVALID_ARG_VALUE",
	-51: "CL_INVALID_ARG_SIZE", -52: "CL_INVALID_KERNEL_ARGS",
	-53: "CL_INVALID_WORK_DIMENSION", -54: "CL_INVALID_WORK_GROUP_SIZE",
	-55: "CL_INVALID_WORK_ITEM_SIZE", -56: "CL_INVALID_GLOBAL_OFFSET",
	-57: "CL_INVALID_EVENT_WAIT_LIST", -58: "CL_INVALID_EVENT", -59: "CL_INVALID_OPERATION",
	-60: "CL_INVALID_GL_OBJECT", -61: "CL_INVALID_BUFFER_SIZE", -62: "CL_INVALID_MIP_LEVEL",
	-63: "CL_INVALID_GLOBAL_WORK_SIZE", -64: "CL_INVALID_PROPERTY",
	-65: "CL_INVALID_IMAGE_DESCRIPTOR", -66: "CL_INVALID_COMPILER_OPTIONS",
	-67: "CL_INVALID_LINKER_OPTIONS", -68: "CL_INVALID_DEVICE_PARTITION_COUNT",
	-1001: "CL_PLATFORM_NOT_FOUND_KHR",
}

// CodeName returns the symbolic name of an OpenCL status code.
func CodeName(code int32) string {
	if n, ok := codeNames[C.cl_int(code)]; ok {
		return n
	}
	return fmt.Sprintf("CL_ERROR(%d)", code)
}

// check turns a status code into nil or a *driver.Error naming call.
func check(call string, code C.cl_int) error {
	if code == C.CL_SUCCESS {
		return nil
	}
	return newError(call, int32(code), "")
}

// newError returns the *driver.Error of a failed call, classified by the
// sentinel of rt/driver that its code means.
func newError(call string, code int32, log string) *driver.Error {
	return &driver.Error{Call: call, Code: code, Name: CodeName(code), Log: log, Kind: kindOf(code)}
}

// kindOf returns the sentinel of rt/driver that an OpenCL status code
// means, or nil.
func kindOf(code int32) error {
	switch C.cl_int(code) {
	case C.CL_MEM_OBJECT_ALLOCATION_FAILURE, C.CL_OUT_OF_RESOURCES, C.CL_OUT_OF_HOST_MEMORY:
		return driver.ErrOutOfMemory
	case C.CL_BUILD_PROGRAM_FAILURE, C.CL_COMPILE_PROGRAM_FAILURE, C.CL_LINK_PROGRAM_FAILURE:
		return driver.ErrBuildFailed
	case C.CL_INVALID_BINARY:
		return driver.ErrInvalidBinary
	case C.CL_INVALID_KERNEL_NAME:
		return driver.ErrNoKernel
	case C.CL_INVALID_ARG_INDEX, C.CL_INVALID_ARG_VALUE, C.CL_INVALID_ARG_SIZE, C.CL_INVALID_KERNEL_ARGS:
		// A kernel argument that does not fit its parameter, which rt
		// cannot see without the kernel's declaration (rt/raw).
		return driver.ErrInvalidArgument
	}
	return nil
}

// nothing calls C and returns: the cost of a cgo call alone, which every
// launch pays once (BenchmarkCgoCall).
func nothing() { C.dgen_nothing() }
