package driver

// Priority is the scheduling priority of a queue: when the device has
// work from queues of several priorities ready, it starts the higher
// one's first. Its zero value is the device's default.
type Priority uint8

// The queue priorities. PriorityNormal is what a queue made by
// Context.NewQueue runs at.
const (
	PriorityNormal Priority = iota
	PriorityHigh
	PriorityLow
)

// QueueOptions are the options of a queue that a PriorityContext makes.
type QueueOptions struct {
	// Profiling asks for a queue that records device times, as
	// Context.NewQueue's profiling does.
	Profiling bool
	// Priority is the queue's priority: one that QueuePriority returned
	// for itself on the queue's device.
	Priority Priority
}

// A PriorityContext is a Context whose queues can be made at a priority
// (CUDA's stream priorities; OpenCL's cl_khr_priority_hints). rt decides
// what a priority the device lacks falls back to; the backend says which
// it has and translates them.
type PriorityContext interface {
	// QueuePriority returns the priority that a queue of device dev made
	// at p runs at: p where the device schedules p's queues apart from
	// the others, else the one whose queues it schedules them with
	// (PriorityNormal where the device has no priorities).
	QueuePriority(dev int, p Priority) Priority
	// NewQueueOptions creates an in-order queue on device dev with o.
	NewQueueOptions(dev int, o QueueOptions) (Queue, error)
}
