package trace

import (
	"strconv"
	"sync/atomic"
)

// Kind is the kind of a trace event.
type Kind uint8

// The event kinds. Their order of emission for one command is NodeCreate
// (first visit of its source location only), TaskBegin, EdgeCreate (the
// implicit in-order edge first, then one per explicit dependency), TaskEnd,
// and TaskComplete once the device times are known.
const (
	// GraphCreate announces the task graph of a Tracer. Every subscriber of
	// the task stream receives it once, before any other task event.
	GraphCreate Kind = iota + 1
	// NodeCreate announces a new node: a command kind and name at one
	// source location. It is emitted once per node; later visits only
	// raise the node's instance count.
	NodeCreate
	// TaskBegin marks the start of the host-side enqueue of a command.
	TaskBegin
	// TaskEnd marks the end of the host-side enqueue of a command.
	TaskEnd
	// TaskComplete reports the device start and end times of a command,
	// aligned to the host clock.
	TaskComplete
	// EdgeCreate records a dependency: Event.From must complete before
	// Event.Task may start.
	EdgeCreate
	// MemAlloc records a device memory allocation, from the driver or
	// from the allocator's free list (Mem.Pooled).
	MemAlloc
	// MemRelease records a device memory release, to the driver or to
	// the allocator's free list (Mem.Pooled).
	MemRelease
	// CacheEvent records a kernel/program cache event (Cache.Op).
	CacheEvent
	// UserRange records a range of Go code that the user named
	// (Tracer.Range), at its end: Event.Name, from Event.Begin to
	// Event.Time. It is delivered on StreamTask.
	UserRange
	// UserMark records an instant that the user named (Tracer.Mark):
	// Event.Name at Event.Time. It is delivered on StreamTask.
	UserMark

	numKinds = iota + 1 // the number of kinds, 0 included
)

var kindNames = [...]string{
	GraphCreate:  "graph_create",
	NodeCreate:   "node_create",
	TaskBegin:    "task_begin",
	TaskEnd:      "task_end",
	TaskComplete: "task_complete",
	EdgeCreate:   "edge_create",
	MemAlloc:     "mem_alloc",
	MemRelease:   "mem_release",
	CacheEvent:   "cache",
	UserRange:    "range",
	UserMark:     "mark",
}

// String returns the name of k as used in logs and trace files, such as
// "task_begin".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// CmdKind is the kind of an enqueued command.
type CmdKind uint8

// The command kinds.
const (
	Kernel CmdKind = iota + 1
	Read
	Write
	Fill
	Copy
	GlobalRead
	GlobalWrite
	// Marker is a command that only waits (OpenCL's marker).
	Marker
	// Graph is a launch of a command graph as a whole, which reports its
	// device times where its commands cannot report theirs one by one.
	Graph
)

var cmdNames = [...]string{
	Kernel:      "kernel",
	Read:        "read",
	Write:       "write",
	Fill:        "fill",
	Copy:        "copy",
	GlobalRead:  "global_read",
	GlobalWrite: "global_write",
	Marker:      "marker",
	Graph:       "graph",
}

// String returns the name of c, such as "kernel" or "global_write".
func (c CmdKind) String() string {
	if int(c) < len(cmdNames) && cmdNames[c] != "" {
		return cmdNames[c]
	}
	return "cmd(" + strconv.Itoa(int(c)) + ")"
}

// CacheOp is the kind of a cache event.
type CacheOp uint8

// The cache operations.
const (
	// MemoryHit is a hit in the in-memory kernel/program cache.
	MemoryHit CacheOp = iota + 1
	// DiskHit is a program loaded from the persistent cache.
	DiskHit
	// Build is a program built from source.
	Build
	// Eviction is a program evicted from the in-memory or persistent cache.
	Eviction
	// RemoteHit is a program binary fetched from the shared remote tier
	// (DGEN_CACHE_REMOTE).
	RemoteHit
	// RemotePublish is a program binary stored on the shared remote tier.
	RemotePublish
)

var cacheNames = [...]string{
	MemoryHit:     "memory_hit",
	DiskHit:       "disk_hit",
	Build:         "build",
	Eviction:      "eviction",
	RemoteHit:     "remote_hit",
	RemotePublish: "remote_publish",
}

// String returns the name of op, such as "disk_hit".
func (op CacheOp) String() string {
	if int(op) < len(cacheNames) && cacheNames[op] != "" {
		return cacheNames[op]
	}
	return "cacheop(" + strconv.Itoa(int(op)) + ")"
}

// Node is a command kind and name at one source location: a node of the
// task graph. Nodes are created by the Tracer and shared by all events that
// refer to them; their exported fields must be treated as read-only.
type Node struct {
	// ID is a stable 64-bit identifier derived from Name, Func, File and
	// Line only, so it is the same in every run of the same build.
	ID   uint64
	Kind CmdKind
	// Name is the kernel name or the command's name.
	Name string

	// What a traced command reads and writes, with the fields above, in
	// the node's first cache line.
	instances atomic.Uint64
	seq       uint32 // index in the Tracer's nodes, the node's number in record files

	// Func, File and Line locate the Go code that issued the command.
	Func string
	File string
	Line int
}

// Instances reports how many tasks of n have begun so far.
func (n *Node) Instances() uint64 { return n.instances.Load() }

// Task is one execution of a node: one enqueued command. Queue.Begin returns
// a pointer to it, nil when the trace point is disabled; the runtime keeps
// it (or a copy) with the command's event so that later commands can depend
// on it, and calls End, DependsOn and Complete on it. Every method does
// nothing on nil and on the zero Task. Events carry copies of tasks.
type Task struct {
	// ID identifies the task within its Tracer; it is never 0 for a traced
	// task.
	ID    uint64
	Node  *Node
	Queue *Queue
	// Instance is the node's instance number of this task, from 1.
	Instance uint64
	// HostBegin and HostEnd are the host times of the enqueue, in
	// nanoseconds on the Tracer's clock (see Tracer.Now). HostEnd is 0
	// until End is called.
	HostBegin, HostEnd int64
	// DevStart and DevEnd are the device execution times, aligned to the
	// host clock; both are 0 until Complete is called.
	DevStart, DevEnd int64

	prev uint64 // the id of the task before it on an in-order queue, for record files
}

// Sampled reports whether the Tracer asks for the device times of the
// task: one instance in N of each node (Tracer.SetDeviceSampling), from the
// first. The runtime profiles only those commands. It is false for nil and
// the zero Task.
func (tk *Task) Sampled() bool {
	if tk == nil || tk.ID == 0 {
		return false
	}
	every := uint64(tk.Queue.t.every.Load())
	return every > 0 && (tk.Instance-1)%every == 0
}

// Mem describes a memory event.
type Mem struct {
	// Tag and TagName identify the allocation tag (0 and "" when untagged).
	Tag     uint64
	TagName string
	// Size is the block's size in bytes.
	Size int64
	// Pooled is true for an allocation served from the free list and for
	// a release that keeps the block in the free list; false for driver
	// allocations and releases.
	Pooled bool
	// Handle is an optional identifier of the block, such as its address.
	Handle uint64
}

// Cache describes a cache event.
type Cache struct {
	Op CacheOp
	// Program is the program's (device image's) name.
	Program string
	// Key is an optional hash of the full cache key.
	Key uint64
	// Duration is the time the operation took, in nanoseconds: the build
	// time for Build, the load time for DiskHit, the transfer time for
	// RemoteHit and RemotePublish.
	Duration int64
}

// Event is one trace event. Events are passed to subscribers by value; the
// fields that apply depend on Kind:
//
//   - GraphCreate: Graph.
//   - NodeCreate: Node.
//   - TaskBegin, TaskEnd, TaskComplete: Task (and Device, its queue's device).
//   - EdgeCreate: From (the source task) and Task (the target), Implicit.
//   - MemAlloc, MemRelease: Device, Mem.
//   - CacheEvent: Device, Cache.
//   - UserRange: Name, Begin (and Time, its end); UserMark: Name.
//
// Time is the host time of the event on the Tracer's clock. Pointer fields
// refer to objects shared by the Tracer and must not be modified.
type Event struct {
	Kind Kind
	// Implicit marks an edge that comes from the order of an in-order
	// queue rather than an explicit wait list.
	Implicit bool
	Stream   *Stream
	Time     int64
	// Graph identifies the Tracer's task graph in a GraphCreate event.
	Graph  uint64
	Device *Device
	Node   *Node
	Task   Task
	From   Task
	Mem    Mem
	Cache  Cache
	// Name and Begin describe a user range or mark: its name, and the
	// host time at which the range began.
	Name  string
	Begin int64
}
