package rt

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// Queue is an in-order command queue on one device. It is safe for
// concurrent use: commands from several goroutines are ordered as they
// reach it. Goroutines that launch concurrently scale best with a queue
// each, as CUDA threads do with a stream each: a generated Enqueue then
// shares no kernel object and takes no lock. A goroutine that lives for
// one request (a server's handler) takes a queue of the context's pool
// for the request instead (Context.AcquireQueue).
type Queue core.Queue

// core returns q as the core's queue.
func (q *Queue) core() *core.Queue { return (*core.Queue)(q) }

// Context returns the queue's context.
func (q *Queue) Context() *Context { return (*Context)(q.core().Context()) }

// Device returns the queue's device.
func (q *Queue) Device() *Device { return deviceOf(q.core().Device()) }

// Priority returns the priority the queue runs at: the one it was made
// at (QueueConfig.Priority) where its device has it, else the one the
// device runs it at instead, PriorityNormal where it has no priorities.
// The context logs a warning (Config.Logger) the first time a queue of a
// device runs at another priority than it was made at.
func (q *Queue) Priority() Priority { return Priority(q.core().Priority()) }

// Flush submits every enqueued command to the device.
func (q *Queue) Flush() error { return q.core().Flush() }

// Finish blocks until every enqueued command has completed.
func (q *Queue) Finish() error { return q.core().Finish() }

// FinishContext is Finish bounded by ctx: when ctx is done before every
// enqueued command has completed, it returns an error wrapping ctx.Err(),
// and the commands run on. The driver's wait, which cannot be stopped,
// goes on in a goroutine until they have completed (Context.Close waits
// for it).
func (q *Queue) FinishContext(ctx context.Context) error { return q.core().FinishContext(ctx) }

// Marker enqueues a command that completes when every event of wait has
// completed, or, with no events, when everything enqueued before it has.
func (q *Queue) Marker(wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := q.core().Marker(waits(&w, wait)...)
	return (*Event)(e), err
}

// Record records into a new graph the commands that record enqueues on
// the queue it is given, and prepares the graph for Launch. name names the
// graph in errors and traces.
//
// Recording. record receives a recording queue of its own, on q's device
// (CUDA's stream capture into a stream of its own, SYCL's
// command_graph::begin_recording): what it enqueues there is recorded, not
// run, and q itself keeps running the commands of every other goroutine
// meanwhile. Any number of goroutines may record on q at once. The
// recording queue records nothing once record has returned: a command on
// it then is an error. Graphs do not nest: Record and Graph.Launch on a
// recording queue are errors.
//
// What a graph records, as CUDA Graphs and SYCL graphs define it:
//   - Kernel launches, with their arguments as set when recorded: values
//     (scalars, structs) are captured, and Graph.Update changes them;
//     buffers and samplers are used as they are at each launch. Each
//     launch keeps the specialization-constant values it was recorded
//     with, its own or the context's then: a later SpecConst.Set changes
//     no recorded launch, and traces name each after its values.
//   - Fill and CopyTo, with Fill's value captured.
//   - Transfers between a buffer and pinned memory (Buffer.WriteAsync and
//     ReadAsync with a Pinned): each launch reads the pinned memory anew,
//     or writes it, so that a program puts the next frame in its Pinned
//     and launches the graph. The host must not touch that memory while a
//     launch may copy it (wait for the launch, with Queue.Marker or
//     Finish); Pinned.Free waits for the launches that use it, and a
//     launch after Free is an error wrapping ErrFreed.
//   - Allocations on the recording queue, which belong to the graph: it
//     frees them when it is released.
//
// What it refuses, with an error that records nothing (record may go
// on): a blocking transfer of a Go slice (Buffer.Write, Read, WriteAt,
// ReadAt), whose host memory the graph could not read or write at each
// launch (use WriteAsync or ReadAsync with pinned memory); a device
// global's Read or Write (write it before Graph.Launch, or pass the value
// as a kernel argument, which the graph captures and Update changes);
// image commands; EnqueueEvent and Queue.Marker, whose events would
// complete before the graph runs; and a wait list. Recorded commands run
// in the order recorded, each after the one before, and create no events:
// a recorded Fill or CopyTo returns a nil Event.
//
// Handles. Queue.Node records one command and returns its handle, which
// Graph.Update takes to change that launch's arguments and range.
//
// Device times. A launch of a traced graph is a range named after the
// graph with a task per command, at the line that recorded it. Where the
// context reports device times (DGEN_TRACE with device= sampling), each
// command reports its own where the backend can time it alone (a loop of
// prepared commands; CUDA graphs' kernels through CUPTI), else one task
// named after the graph reports the launch as a whole (a command buffer,
// a CUDA graph without CUPTI).
//
// If record returns an error, Record returns it, wrapped, and no graph.
// Preparing the graph gives every recorded launch a kernel object of its
// own with its arguments set (a sampler argument as the context's sampler
// object, which must still be live when the graph launches), and has the
// backend prepare the commands for q: a command buffer or CUDA graph, or a
// list of commands replayed by one call, which is what a graph gets where
// the backend's own graph object cannot hold a command (a sampler
// argument, a pinned transfer in an OpenCL command buffer). A backend
// whose kernels take no samplers fails Record with an error naming the
// kernel and the argument.
func (q *Queue) Record(name string, record func(q *Queue) error) (*Graph, error) {
	g, err := q.core().Record(name, queueFunc(record))
	return (*Graph)(g), err
}

// Node records the one command that enqueue enqueues on q, a recording
// queue (the one Queue.Record hands its function), and returns its handle
// for Graph.Update. enqueue is called with q. A command that cannot be
// recorded, no command or more than one, or a q that is not recording, is
// an error, and nothing enqueue recorded is kept. Other goroutines must
// not enqueue on q meanwhile.
func (q *Queue) Node(enqueue func(q *Queue) error) (*GraphNode, error) {
	n, err := q.core().Node(queueFunc(enqueue))
	return (*GraphNode)(n), err
}

// queueFunc returns f as a function of the core's queue; nil for nil, which
// the core refuses.
func queueFunc(f func(q *Queue) error) func(q *core.Queue) error {
	if f == nil {
		return nil
	}
	return func(q *core.Queue) error { return f((*Queue)(q)) }
}

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

// core returns cfg as the core takes it.
func (cfg QueueConfig) core() core.QueueConfig {
	return core.QueueConfig{Priority: core.Priority(cfg.Priority)}
}
