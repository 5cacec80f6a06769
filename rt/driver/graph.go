package driver

import "unsafe"

// Command graphs. rt records commands into a graph and hands the backend
// the finished list; a backend whose queue implements GraphQueue prepares
// it once (an OpenCL command buffer, a CUDA graph, or a list of prepared
// launches) and replays it with one call per launch of the graph. Without
// GraphQueue rt replays the commands through Queue one by one.

// GraphCommandKind says what a recorded command does.
type GraphCommandKind uint8

// The kinds of recorded commands.
const (
	// GraphKernel launches Kernel over Range. The kernel object belongs to
	// the graph, and its arguments are set before NewGraph is called.
	GraphKernel GraphCommandKind = iota
	// GraphCopy copies Size bytes of Src from SrcOffset to Dst at
	// DstOffset.
	GraphCopy
	// GraphFill repeats the pattern Data over Size bytes of Dst from
	// DstOffset.
	GraphFill
	// GraphWrite copies Size bytes of host memory at Host to Dst at
	// DstOffset, reading the host memory at each launch: pinned memory,
	// whose host buffer (HostBufferContext) is Src, from SrcOffset.
	GraphWrite
	// GraphRead copies Size bytes of Src from SrcOffset into host memory
	// at Host, writing it at each launch: pinned memory, whose host buffer
	// is Dst, from DstOffset.
	GraphRead
)

// GraphCommand is one recorded command. The commands of a graph run in
// the order of the list, each after the previous one has completed.
type GraphCommand struct {
	Kind      GraphCommandKind
	Kernel    Kernel
	Range     NDRange
	Src, Dst  Buffer
	SrcOffset int64
	DstOffset int64
	Size      int64
	// Data is a fill's pattern; the backend copies it.
	Data []byte
	// Host is the host memory of a GraphWrite or GraphRead, mapped
	// pinned memory that stays valid until the graph is released.
	Host unsafe.Pointer
}

// GraphQueue is a Queue that prepares recorded commands for replay.
type GraphQueue interface {
	// GraphCaps reports how the queue can prepare graphs.
	GraphCaps() GraphCaps
	// NewGraph prepares cmds for launches on this queue: as the device
	// API's own graph object when opt.Native is set (rt sets it only where
	// GraphCaps reports Native), else as a list of prepared commands that
	// Launch replays in one call. The kernel objects, buffers and samplers
	// of cmds stay valid until the graph is released.
	NewGraph(cmds []GraphCommand, opt GraphOptions) (Graph, error)
}

// GraphCaps says how a GraphQueue can prepare graphs. The backend reports
// what its device and driver can do; rt chooses.
type GraphCaps struct {
	// Native is the device API's own graph object that the queue can
	// prepare a graph as, NoNativeGraph where it has none.
	Native NativeGraph
	// NativeSamplers reports that such a graph object holds kernels with
	// sampler arguments correctly. Where it does not, rt prepares a graph
	// with such a kernel as a list of prepared commands.
	NativeSamplers bool
	// NativeHost reports that such a graph object holds GraphWrite and
	// GraphRead commands. Where it does not, rt prepares a graph with one
	// as a list of prepared commands.
	NativeHost bool
}

// NativeGraph names a device API's own graph object.
type NativeGraph uint8

// The native graph objects.
const (
	// NoNativeGraph: the queue prepares graphs as prepared commands only.
	NoNativeGraph NativeGraph = iota
	// CommandBuffer is an OpenCL command buffer (cl_khr_command_buffer).
	CommandBuffer
	// CUDAGraph is a CUDA graph, instantiated for launches.
	CUDAGraph
)

// GraphOptions is rt's choice of how a GraphQueue prepares one graph.
type GraphOptions struct {
	// Native asks for the device API's own graph object.
	Native bool
}

// Graph is a prepared list of commands, bound to the queue that made it.
type Graph interface {
	// Launch enqueues every command of the graph after wait, in one call
	// where the backend can. It returns an event for the whole graph only
	// when event is true.
	Launch(wait []Event, event bool) (Event, error)
	// Update tells the graph that the arguments of command i's kernel
	// object, or its range r, changed since NewGraph or the last Update:
	// launches from now on use the new ones.
	Update(i int, r NDRange) error
	// Release releases what the graph holds; the kernel objects and
	// buffers stay with rt.
	Release() error
}

// A TimedGraph is a Graph that reports device times of its commands one
// by one where it can: the runtime launches a graph this way when tracing
// wants device times (the queue profiles).
type TimedGraph interface {
	// LaunchTimed is Launch with events for device times only: no other
	// command waits for them. Where the graph times its commands one by
	// one, cmds has an event per command (nil for a command it cannot
	// time alone) and whole is nil; else cmds is nil and whole is the
	// event of the whole launch. The caller releases every event.
	LaunchTimed(wait []Event) (cmds []Event, whole Event, err error)
}

// An ArgsGraph is a Graph that holds its kernels' arguments itself.
type ArgsGraph interface {
	// HoldsArgs reports that the graph took its kernels' arguments at
	// NewGraph and Update, so that its next untimed Launch reads none of
	// its kernel objects: rt may set them for another queue's graph while
	// this one's launch is enqueued. A CUDA executable graph copies them
	// into its nodes; PoCL's command buffers read them at enqueue.
	HoldsArgs() bool
}

// A CommandGraph is a Graph whose copy and fill commands can take other
// buffers for the launches that follow: rt calls SetCommand when a
// graph's buffer parameter is bound to another buffer (Graph.LaunchWith).
type CommandGraph interface {
	// SetCommand replaces command i, a copy or a fill, by c, of the same
	// kind, size and pattern size: only its buffers and their offsets
	// differ. Launches already enqueued keep what they were enqueued with.
	SetCommand(i int, c GraphCommand) error
}
