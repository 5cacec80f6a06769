package trace

import (
	"hash/fnv"
	"runtime"
	"strconv"
)

// Begin is the trace point of an enqueued command: it returns the command's
// task, emitting NodeCreate on the first visit of its source location,
// TaskBegin, and on an in-order queue the implicit EdgeCreate from the
// queue's previous task. When StreamTask has no subscriber it costs one
// atomic load and returns the zero Task.
//
// kind and name describe the command (the kernel name for a launch, the
// command's name otherwise: "read", a device global's name, ...). skip
// selects the Go source location recorded: 0 is the function that calls
// Begin, 1 its caller, and so on, as the runtime's call depth requires to
// reach user code. The location is cached by program counter, so a call site
// is symbolised once. q must not be nil: a Tracer without subscribers still
// hands out queues, so the runtime always has one.
func (q *Queue) Begin(kind CmdKind, name string, skip int) Task {
	if q.task.subs.Load() == nil {
		return Task{}
	}
	return q.begin(kind, name, skip)
}

func (q *Queue) begin(kind CmdKind, name string, skip int) Task {
	sp := q.task.subs.Load()
	if sp == nil {
		return Task{}
	}
	subs := *sp
	var pcs [1]uintptr
	// Callers' frame 0 is Callers itself, 1 is begin, 2 is Begin, 3 is
	// Begin's caller. Inlined frames count as frames, so inlining of
	// Begin does not change the count.
	var pc uintptr
	if runtime.Callers(skip+3, pcs[:]) == 1 {
		pc = pcs[0]
	}
	t := q.t
	n := t.node(pc, kind, name)
	tk := Task{
		ID:        t.nextTask.Add(1),
		Node:      n,
		Queue:     q,
		Instance:  n.instances.Add(1),
		HostBegin: t.Now(),
	}
	e := Event{Kind: TaskBegin, Stream: t.task, Time: tk.HostBegin, Device: q.Device, Task: tk}
	deliver(subs, &e)
	if q.InOrder {
		q.mu.Lock()
		prev := q.last
		q.last = tk
		q.mu.Unlock()
		if prev.ID != 0 {
			e.Kind = EdgeCreate
			e.Implicit = true
			e.From = prev
			deliver(subs, &e)
		}
	}
	return tk
}

// DependsOn records that the task must wait for from (an entry of its wait
// list): it emits EdgeCreate. It does nothing for a zero task or a zero from
// (a command enqueued while tracing was off).
func (tk *Task) DependsOn(from Task) {
	if tk.ID != 0 && from.ID != 0 {
		tk.dependsOn(&from)
	}
}

func (tk *Task) dependsOn(from *Task) {
	t := tk.Queue.t
	subs := t.task.subs.Load()
	if subs == nil {
		return
	}
	e := Event{Kind: EdgeCreate, Stream: t.task, Time: t.Now(), Device: tk.Queue.Device, Task: *tk, From: *from}
	deliver(*subs, &e)
}

// End marks the end of the task's host-side enqueue: it sets tk.End (always
// after tk.HostBegin) and emits TaskEnd. It does nothing for a zero task.
func (tk *Task) End() {
	if tk.ID != 0 {
		tk.end()
	}
}

func (tk *Task) end() {
	q := tk.Queue
	t := q.t
	now := t.Now()
	if now <= tk.HostBegin {
		now = tk.HostBegin + 1
	}
	tk.HostEnd = now
	if q.InOrder {
		q.mu.Lock()
		if q.last.ID == tk.ID {
			q.last.HostEnd = now
		}
		q.mu.Unlock()
	}
	subs := t.task.subs.Load()
	if subs == nil {
		return
	}
	e := Event{Kind: TaskEnd, Stream: t.task, Time: now, Device: q.Device, Task: *tk}
	deliver(*subs, &e)
}

// Complete reports the device execution times of the task, start and end in
// device nanoseconds (OpenCL's CL_PROFILING_COMMAND_START and _END): it
// aligns them to the host clock (see Device.SyncClock), stores them in tk
// and emits TaskComplete. It does nothing for a zero task.
func (tk *Task) Complete(start, end int64) {
	if tk.ID != 0 {
		tk.complete(start, end)
	}
}

func (tk *Task) complete(start, end int64) {
	q := tk.Queue
	t := q.t
	d := q.Device
	tk.DevStart = d.ToHost(start)
	tk.DevEnd = d.ToHost(end)
	if tk.DevEnd <= tk.DevStart {
		tk.DevEnd = tk.DevStart + 1
	}
	subs := t.task.subs.Load()
	if subs == nil {
		return
	}
	e := Event{Kind: TaskComplete, Stream: t.task, Time: t.Now(), Device: d, Task: *tk}
	deliver(*subs, &e)
}

// MemAlloc emits a MemAlloc event for the device. It costs one atomic load
// when StreamMem has no subscriber. d must not be nil, here and in
// MemRelease and CacheEvent.
func (d *Device) MemAlloc(m Mem) {
	if d.t.mem.subs.Load() != nil {
		d.emit(Event{Kind: MemAlloc, Mem: m})
	}
}

// MemRelease emits a MemRelease event for the device. It costs one atomic
// load when StreamMem has no subscriber.
func (d *Device) MemRelease(m Mem) {
	if d.t.mem.subs.Load() != nil {
		d.emit(Event{Kind: MemRelease, Mem: m})
	}
}

// CacheEvent emits a CacheEvent for the device, at the end of the
// operation. It costs one atomic load when StreamCache has no subscriber.
func (d *Device) CacheEvent(c Cache) {
	if d.t.cache.subs.Load() != nil {
		d.emit(Event{Kind: CacheEvent, Cache: c})
	}
}

// emit delivers e on the stream of its kind.
func (d *Device) emit(e Event) {
	s := d.t.mem
	if e.Kind == CacheEvent {
		s = d.t.cache
	}
	if subs := s.subs.Load(); subs != nil {
		e.Stream = s
		e.Time = d.t.Now()
		e.Device = d
		deliver(*subs, &e)
	}
}

// node returns the node of (pc, kind, name), creating it and emitting
// NodeCreate on first use. The fast path is one atomic load and one map
// lookup keyed by the program counter; it allocates nothing.
func (t *Tracer) node(pc uintptr, kind CmdKind, name string) *Node {
	for _, n := range (*t.sites.Load())[pc] {
		if n.Name == name && n.Kind == kind {
			return n
		}
	}
	return t.newNode(pc, kind, name)
}

func (t *Tracer) newNode(pc uintptr, kind CmdKind, name string) *Node {
	t.mu.Lock()
	defer t.mu.Unlock()
	sites := *t.sites.Load()
	for _, n := range sites[pc] {
		if n.Name == name && n.Kind == kind {
			return n
		}
	}
	fn, file, line := "unknown", "unknown", 0
	if pc != 0 {
		fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		if fr.Function != "" {
			fn = fr.Function
		}
		if fr.File != "" {
			file = fr.File
		}
		line = fr.Line
	}
	id := NodeID(name, fn, file, line)
	n, ok := t.nodes[id]
	if !ok {
		n = &Node{ID: id, Kind: kind, Name: name, Func: fn, File: file, Line: line}
		t.nodes[id] = n
		t.nodeList = append(t.nodeList, n)
		if subs := t.task.subs.Load(); subs != nil {
			e := Event{Kind: NodeCreate, Stream: t.task, Time: t.Now(), Node: n}
			deliver(*subs, &e)
		}
	}
	// Copy on write: readers never lock.
	next := make(map[uintptr][]*Node, len(sites)+1)
	for k, v := range sites {
		next[k] = v
	}
	next[pc] = append(append([]*Node(nil), sites[pc]...), n)
	t.sites.Store(&next)
	return n
}

// NodeID returns the stable identifier of a node: the 64-bit FNV-1a hash of
// name, function, file and line separated by NUL bytes. It depends on
// nothing else, so it is the same in every process running the same build.
func NodeID(name, function, file string, line int) uint64 {
	h := fnv.New64a()
	var buf [20]byte
	for _, s := range []string{name, function, file} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(strconv.AppendInt(buf[:0], int64(line), 10))
	return h.Sum64()
}
