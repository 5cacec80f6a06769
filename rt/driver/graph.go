package driver

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
	// GraphWrite copies Data to Dst at DstOffset: the bytes as they were
	// when the command was recorded.
	GraphWrite
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
	// Data is a fill's pattern or a write's bytes; the backend copies it.
	Data []byte
}

// GraphQueue is a Queue that prepares recorded commands for replay.
type GraphQueue interface {
	// NewGraph prepares cmds for launches on this queue. The kernel
	// objects and buffers of cmds stay valid until the graph is released.
	NewGraph(cmds []GraphCommand) (Graph, error)
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
