package opencl

/*
#include "dgen_cl.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/dgen-go/dgen/rt/driver"
)

var _ driver.PriorityContext = (*context)(nil)

// clPriorities are cl_khr_priority_hints's priorities, by rt's: a queue
// made without one runs at CL_QUEUE_PRIORITY_MED_KHR.
var clPriorities = [...]C.cl_uint{
	driver.PriorityNormal: C.CL_QUEUE_PRIORITY_MED_KHR,
	driver.PriorityHigh:   C.CL_QUEUE_PRIORITY_HIGH_KHR,
	driver.PriorityLow:    C.CL_QUEUE_PRIORITY_LOW_KHR,
}

// QueuePriority implements driver.PriorityContext: p on a device that
// reports cl_khr_priority_hints, PriorityNormal on the others.
func (c *context) QueuePriority(dev int, p driver.Priority) driver.Priority {
	if dev < 0 || dev >= len(c.priorities) || !c.priorities[dev] || int(p) >= len(clPriorities) {
		return driver.PriorityNormal
	}
	return p
}

// NewQueueOptions implements driver.PriorityContext: a queue at a
// priority is made with cl_khr_priority_hints's property, one at
// PriorityNormal as NewQueue makes it. A priority on a device without the
// extension is an error wrapping errors.ErrUnsupported.
func (c *context) NewQueueOptions(dev int, o driver.QueueOptions) (driver.Queue, error) {
	if o.Priority == driver.PriorityNormal {
		return c.NewQueue(dev, o.Profiling)
	}
	if c.QueuePriority(dev, o.Priority) != o.Priority {
		return nil, fmt.Errorf("clCreateCommandQueueWithProperties: %w: device %d does not report cl_khr_priority_hints (priority %d)", errors.ErrUnsupported, dev, o.Priority)
	}
	prof := C.int(0)
	if o.Profiling {
		prof = 1
	}
	var code C.cl_int
	h := C.dgen_priority_queue(c.h, c.devs[dev], prof, clPriorities[o.Priority], &code)
	if err := check("clCreateCommandQueueWithProperties", code); err != nil {
		return nil, err
	}
	return c.newQueue(h), nil
}
