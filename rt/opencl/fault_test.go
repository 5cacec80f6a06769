//go:build cgo

package opencl

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// TestFaultMapping: the codes that mean a device fault (see fault.go)
// wrap driver.ErrDeviceFault, decided by the call and the state; the same
// codes elsewhere keep their usual meaning. CL_OUT_OF_RESOURCES on a live
// queue is asked about with clFinish, which PoCL's healthy queue answers
// with success: out of memory, not a fault.
func TestFaultMapping(t *testing.T) {
	c := cpuContext(t)
	dq, err := c.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dq.Release()
	q := dq.(queue)
	tests := []struct {
		name       string
		err        error
		fault, oom bool
	}{
		{"lost queue", queueError(q.h, "clFinish", -36), true, false},
		{"failed command waited for", queueError(q.h, "clEnqueueReadBuffer", -14), true, false},
		{"out of resources on a live queue", queueError(q.h, "clEnqueueNDRangeKernel", -5), false, true},
		{"other queue error", queueError(q.h, "clEnqueueNDRangeKernel", -54), false, false},
		{"command ended abnormally", statusError(-5), true, false},
		{"NVIDIA's lost context", contextError("NVIDIA CUDA", -9999), true, false},
		{"-9999 elsewhere", contextError("Portable Computing Language", -9999), false, false},
		{"no device", contextError("NVIDIA CUDA", -33), false, false},
		{"NVIDIA's event query after a fault", eventError("clGetEventInfo", -9999), true, false},
		{"an invalid event", eventError("clGetEventInfo", -58), false, false},
	}
	for _, tt := range tests {
		if fault := errors.Is(tt.err, driver.ErrDeviceFault); fault != tt.fault {
			t.Errorf("%s: %v: a fault %v, want %v", tt.name, tt.err, fault, tt.fault)
		}
		if oom := errors.Is(tt.err, driver.ErrOutOfMemory); oom != tt.oom {
			t.Errorf("%s: %v: out of memory %v, want %v", tt.name, tt.err, oom, tt.oom)
		}
	}
	if err := queueError(q.h, "clFinish", 0); err != nil {
		t.Errorf("success: %v", err)
	}
}
