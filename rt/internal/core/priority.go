package core

import (
	"fmt"

	"github.com/dgen-go/dgen/rt/driver"
)

// Queue priorities: the policy of rt. A queue asks for a priority
// (QueueConfig.Priority); the backend says which priority the device
// runs a queue asked for it at (driver.PriorityContext.QueuePriority,
// where CUDA maps rt's priorities onto its stream priorities and OpenCL
// looks for cl_khr_priority_hints); rt makes the queue at that one and
// reports it (Queue.Priority), and warns once per context, device and
// priority when it is not the one asked for. A backend that is no
// PriorityContext has no priorities: its queues all run at
// PriorityNormal. The queue pool keeps a pool of queues for each priority
// asked for (queuepool.go), whatever they run at: a request that asks for
// PriorityHigh never shares an in-order queue with the requests of
// another priority, even where the device has no priorities.

// QueueConfig says how Context.NewQueueConfig and AcquireQueueConfig make
// a queue. The zero QueueConfig is what NewQueue and AcquireQueue make.
type QueueConfig struct {
	// Priority is the queue's scheduling priority: where queues of a
	// device have work ready, the device starts that of the higher
	// priority first (on CUDA, block by block as the multiprocessors free
	// up, so that a short kernel need not wait for a long one of a queue
	// of lower priority to end). The zero Priority is PriorityNormal.
	//
	// On rt/cuda, priorities are CUDA's stream priorities: PriorityHigh is
	// the device's greatest, PriorityNormal and PriorityLow its default,
	// which on NVIDIA's GPUs is also its least, so that a queue at
	// PriorityLow runs at PriorityNormal (Queue.Priority says so). On
	// rt/opencl they are cl_khr_priority_hints's, where the device reports
	// that extension; where it does not (PoCL), every queue runs at
	// PriorityNormal.
	Priority Priority
}

// check returns an error wrapping ErrInvalidArgument for a priority that
// is not one of rt's.
func (cfg QueueConfig) check() error {
	if int(cfg.Priority) >= numPriorities {
		return fmt.Errorf("%w: queue priority %v: want one of normal, high, low", ErrInvalidArgument, cfg.Priority)
	}
	return nil
}

// queuePriority returns the priority that a queue of dev asked for p runs
// at (the policy above), warning the first time on dev that it is not p.
func (c *Context) queuePriority(dev *Device, p Priority) Priority {
	if p == PriorityNormal {
		return p
	}
	got := PriorityNormal
	if pc, ok := c.drv.(driver.PriorityContext); ok {
		got = Priority(pc.QueuePriority(dev.index, driver.Priority(p)))
	}
	if got != p && !dev.priorityWarned[p].Swap(true) {
		c.log().Warn("dgen: the device has no queue priority "+p.String()+": its queues run at "+got.String()+" (Queue.Priority reports it)",
			"device", dev.Name, "backend", c.backend, "priority", p.String(), "runs_at", got.String())
	}
	return got
}

// Priority returns the priority the queue runs at: the one it was made
// at (QueueConfig.Priority) where its device has it, else the one the
// device runs it at instead, PriorityNormal where it has no priorities.
// The context logs a warning (Config.Logger) the first time a queue of a
// device runs at another priority than it was made at.
func (q *Queue) Priority() Priority {
	if q == nil {
		return PriorityNormal
	}
	return q.prio
}
