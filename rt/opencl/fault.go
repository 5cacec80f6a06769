package opencl

/*
#include "dgen_cl.h"
*/
import "C"

import (
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// Device faults. OpenCL has no status code that says "a kernel faulted":
// each driver answers with codes that also mean other things. What
// NVIDIA's OpenCL answers after a kernel writes far out of bounds
// (measured on an H200, driver 580.159.04):
//
//   - the launch itself returns CL_SUCCESS;
//   - clFinish on the kernel's queue returns CL_INVALID_COMMAND_QUEUE at
//     once;
//   - transfers on the context return CL_OUT_OF_RESOURCES;
//   - clCreateContext returns -9999 from then on, for the whole process,
//     whatever is released or queried again: nothing recovers NVIDIA's
//     OpenCL in the process (CUDA's driver API still works).
//
// PoCL runs kernels on the process's own threads: there an out-of-bounds
// kernel is a SIGSEGV or an assertion, and the process ends.
//
// So this backend decides by the call and the state:
//
//   - CL_INVALID_COMMAND_QUEUE from a call on a queue is a fault: rt passes
//     only queues it created and has not released, so the driver has
//     invalidated the queue itself (queueError). So is
//     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: a command waited for
//     ended abnormally on the device.
//   - CL_OUT_OF_RESOURCES from a call on a queue is either a fault or a
//     plain failure: a launch that asks for more registers or local memory
//     than the device has fails so before anything ran. The backend asks
//     the queue's state: clFinish answers CL_INVALID_COMMAND_QUEUE after a
//     fault and waits for the queue otherwise (on the error path only);
//     only the first makes the error a fault, the second keeps it
//     ErrOutOfMemory (queueError).
//   - A negative execution status of a command (an event's status, or
//     clWaitForEvents' CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) is a
//     fault: the command ended abnormally on the device (statusError).
//   - -9999 from clCreateContext on NVIDIA's platform is the lost device
//     of a process in which NVIDIA's OpenCL faulted (contextError), and so
//     is -9999 from clGetEventInfo on an event rt holds: after a fault on
//     the context NVIDIA's driver answers the status query of any of its
//     events so, even one of another queue made after the fault (measured
//     on an H200: Health's probe; eventError).

// nvidiaLost is the status that NVIDIA's clCreateContext returns in a
// process whose NVIDIA OpenCL faulted.
const nvidiaLost = -9999

// queueError is check for a call on the live queue q: a status that means
// a fault there is an error wrapping driver.ErrDeviceFault (see "Device
// faults" above).
func queueError(q C.cl_command_queue, call string, code C.cl_int) error {
	if code == C.CL_SUCCESS {
		return nil
	}
	e := newError(call, int32(code), "")
	switch code {
	case C.CL_INVALID_COMMAND_QUEUE, C.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
		e.Kind = driver.ErrDeviceFault
	case C.CL_OUT_OF_RESOURCES:
		if C.clFinish(q) == C.CL_INVALID_COMMAND_QUEUE {
			e.Kind = driver.ErrDeviceFault
			e.Name += " (the queue was lost to a device fault: clFinish answers CL_INVALID_COMMAND_QUEUE)"
		}
	}
	return e
}

// statusError is the error of a command whose execution status is the
// negative code s: it ended abnormally on the device, a fault.
func statusError(s C.cl_int) error {
	e := newError("command execution", int32(s), "")
	e.Kind = driver.ErrDeviceFault
	return e
}

// eventError is check for a query of an event that rt holds: NVIDIA's
// -9999 is the context's device lost to a fault (no standard status is
// negative beyond -72, so no other driver's error is taken for it).
func eventError(call string, code C.cl_int) error {
	if code == C.CL_SUCCESS {
		return nil
	}
	e := newError(call, int32(code), "")
	if code == nvidiaLost {
		e.Kind = driver.ErrDeviceFault
		e.Name += " (NVIDIA's OpenCL answers every event's query so after a kernel of the context faulted)"
	}
	return e
}

// contextError is check for clCreateContext on platform: NVIDIA's -9999
// is a device lost to a fault earlier in the process.
func contextError(platform string, code C.cl_int) error {
	if code == C.CL_SUCCESS {
		return nil
	}
	e := newError("clCreateContext", int32(code), "")
	if code == nvidiaLost && strings.Contains(strings.ToUpper(platform), "NVIDIA") {
		e.Kind = driver.ErrDeviceFault
		e.Name += " (NVIDIA's OpenCL refuses every new context in a process where a kernel faulted)"
	}
	return e
}
