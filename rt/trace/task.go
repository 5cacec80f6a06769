package trace

import (
	"hash/fnv"
	"math/bits"
	"runtime"
	"strconv"
)

// Begin is the trace point of an enqueued command: it returns the command's
// task, emitting NodeCreate on the first visit of its source location,
// TaskBegin, and on an in-order queue the implicit EdgeCreate from the
// queue's previous task. When StreamTask has no subscriber it costs one
// atomic load and returns nil, on which every method of Task does nothing.
//
// kind and name describe the command (the kernel name for a launch, the
// command's name otherwise: "read", a device global's name, ...). skip
// selects the Go source location recorded: 0 is the function that calls
// Begin, 1 its caller, and so on, as the runtime's call depth requires to
// reach user code. The call site is found by a walk of a few frame
// pointers and a lookup of their return addresses in a cache, so a site is
// located with runtime.Callers and symbolised only on its first visit. q
// must not be nil: a Tracer without subscribers still hands out queues, so
// the runtime always has one.
//
// The task is reused from an earlier one: the caller hands it back with
// Release once it has no more use for it (after End, and Complete where
// the command reports device times), or keeps it for as long as it likes
// by not releasing it. A task that is never released is left to the
// garbage collector.
func (q *Queue) Begin(kind CmdKind, name string, skip int) *Task {
	if !q.Subscribed() {
		return nil
	}
	return q.begin(kind, name, skip)
}

// Subscribed reports whether q's task stream has a subscriber now, so
// that Begin may return a task: a runtime whose commands do more than
// Begin for a traced command asks it first, and leaves that work out of
// its path while nobody subscribes. q must not be nil.
func (q *Queue) Subscribed() bool { return q.view.Load() != nil }

func (q *Queue) begin(kind CmdKind, name string, skip int) *Task {
	// The frames from begin up to the call site key the site cache, as
	// many as Begins of this skip need (see shorten); a miss walks all the
	// frames that the site may need, and only a miss there pays for
	// runtime.Callers. One call of fpCallers walks both times, so that
	// the first word, the return address into begin, is the same.
	var key siteKey
	var n *Node
	depth := 0
	if full := skip + 3 + siteMargin; full <= keyDepth {
		d := full
		if w := int(q.t.walk[skip].Load()); w != 0 {
			d = w
		}
		for {
			depth = fpCallers(&key, d)
			if n = q.t.lookupSite(&key, depth, kind, name); n != nil || d == full || depth < d {
				break
			}
			d = full
		}
	}
	if n == nil {
		n = q.t.locate(&key, depth, skip, kind, name)
	}
	v := q.view.Load()
	if v == nil { // unsubscribed since Begin looked
		return nil
	}
	return q.start(v, n)
}

// locate returns the node of a call site that the site cache does not
// hold, from runtime.Callers, and caches it under key. skip is Begin's.
func (t *Tracer) locate(key *siteKey, depth, skip int, kind CmdKind, name string) *Node {
	// Callers' frame 0 is Callers itself, 1 is locate, 2 is begin, 3 is
	// Begin, 4 is Begin's caller. Inlined frames count as frames, so
	// inlining does not change the count.
	var pcs [1]uintptr
	var pc uintptr
	if runtime.Callers(skip+4, pcs[:]) == 1 {
		pc = pcs[0]
	}
	if depth != 0 {
		depth = t.shorten(key, depth, skip, pc)
	}
	return t.newNode(key, depth, pc, kind, name)
}

// shorten cuts key, the frames of a Begin with the given skip up to its
// call site and siteMargin frames beyond, to the depth that Begins with
// that skip walk from now on, and returns it: the frames up to the one that
// returns into the call site pc, or more if another call site of that skip
// needed more (t.walk[skip] only grows). Where the call site is inlined
// into its caller no frame returns to pc, and the key keeps its depth.
func (t *Tracer) shorten(key *siteKey, depth, skip int, pc uintptr) int {
	need := depth
	for i, ret := range key[:depth] {
		if ret == pc {
			need = i + 1
			break
		}
	}
	for w := &t.walk[skip]; ; {
		old := w.Load()
		if int(old) >= need {
			need = min(int(old), depth)
			break
		}
		if w.CompareAndSwap(old, int32(need)) {
			break
		}
	}
	clear(key[need:depth])
	return need
}

// start begins a task of node n on q, whose task stream has the view v:
// what Begin and BeginNode share. On an in-order queue the task's prev is
// the id of the task begun before it there, which a record file stores as
// the implicit edge.
func (q *Queue) start(v *view, n *Node) *Task {
	t := q.t
	tk := q.newTask()
	id := t.nextTask.Add(1)
	var prev uint64
	if q.InOrder {
		prev = q.lastID.Swap(id)
	}
	tk.ID, tk.Instance, tk.HostBegin, tk.prev = id, n.instances.Add(1), t.Now(), prev
	tk.HostEnd, tk.DevStart, tk.DevEnd = 0, 0, 0
	if tk.Node != n { // a reused task often ran the same node: no write barrier
		tk.Node = n
	}
	if tk.Queue != q {
		tk.Queue = q
	}
	if v.events != 0 && (v.wants(TaskBegin) || q.InOrder && v.wants(EdgeCreate)) {
		q.deliverBegin(v, tk)
	}
	return tk
}

// deliverBegin delivers the events of tk's begin to the subscribers that
// take Events: TaskBegin, and on an in-order queue the implicit EdgeCreate
// from the queue's previous task, which they get whole, kept under the
// queue's lock.
func (q *Queue) deliverBegin(v *view, tk *Task) {
	if subs := v.kinds[TaskBegin]; subs != nil {
		e := Event{Kind: TaskBegin, Stream: q.task, Time: tk.HostBegin, Device: q.Device, Task: *tk}
		deliver(subs, &e)
	}
	subs := v.kinds[EdgeCreate]
	if !q.InOrder || subs == nil {
		return
	}
	q.mu.Lock()
	prev := q.last
	q.last = *tk
	q.mu.Unlock()
	if tk.prev != 0 && prev.ID == tk.prev {
		e := Event{Kind: EdgeCreate, Implicit: true, Stream: q.task, Time: tk.HostBegin, Device: q.Device, Task: *tk, From: prev}
		deliver(subs, &e)
	}
}

// newTask returns a released task for q to reuse: the queue's spare one,
// else one from the Tracer's pool, else a new one.
func (q *Queue) newTask() *Task {
	if tk := q.spare.Swap(nil); tk != nil {
		return tk
	}
	return q.t.pooledTask()
}

func (t *Tracer) pooledTask() *Task {
	if tk, _ := t.tasks.Get().(*Task); tk != nil {
		return tk
	}
	return new(Task)
}

// Release hands tk back for a later Begin to reuse: the caller must not
// use tk, or any copy of the pointer, afterwards. A Task value copied from
// *tk stays valid. It does nothing for nil.
//
// A released task becomes its queue's spare, which the queue's next Begin
// takes, so that a goroutine that begins and releases tasks one after the
// other reuses one; the spare it displaces goes to a pool of the Tracer.
func (tk *Task) Release() {
	if tk != nil {
		tk.release()
	}
}

func (tk *Task) release() {
	q := tk.Queue
	if q == nil { // the zero Task
		return
	}
	if old := q.spare.Swap(tk); old != nil {
		q.t.tasks.Put(old)
	}
}

// DependsOn records that the task must wait for from (an entry of its wait
// list): it emits EdgeCreate, at the task's HostBegin, so that it reads no
// clock. It does nothing when tk or from is nil or the zero Task (a command
// enqueued while tracing was off).
func (tk *Task) DependsOn(from *Task) {
	if tk != nil && from != nil && from.ID != 0 {
		tk.Queue.t.edge(tk, from, false)
	}
}

// edge emits EdgeCreate from from to to. The edge is part of the task's
// begin: its time, not a clock read.
func (t *Tracer) edge(to, from *Task, implicit bool) {
	for _, r := range t.task.records(EdgeCreate) {
		r.edge(to, from, implicit)
	}
	if subs := t.task.wanting(EdgeCreate); subs != nil {
		e := Event{Kind: EdgeCreate, Implicit: implicit, Stream: t.task, Time: to.HostBegin, Device: to.Queue.Device, Task: *to, From: *from}
		deliver(subs, &e)
	}
}

// End marks the end of the task's host-side enqueue: it sets tk.End (always
// after tk.HostBegin) and emits TaskEnd. It does nothing for nil or the
// zero Task.
func (tk *Task) End() {
	if tk != nil {
		tk.end()
	}
}

func (tk *Task) end() {
	if tk.ID == 0 {
		return
	}
	q := tk.Queue
	t := q.t
	now := t.Now()
	if now <= tk.HostBegin {
		now = tk.HostBegin + 1
	}
	tk.HostEnd = now
	v := q.view.Load()
	if v == nil {
		return
	}
	for _, r := range v.files {
		r.taskRec(recTaskEnd, tk)
	}
	if v.events != 0 && (v.wants(TaskEnd) || q.InOrder && v.wants(EdgeCreate)) {
		tk.deliverEnd(v)
	}
}

// deliverEnd delivers TaskEnd to the subscribers that take Events, and
// gives the queue's copy of its last task, for the implicit edges they
// get, its end.
func (tk *Task) deliverEnd(v *view) {
	q := tk.Queue
	if q.InOrder && v.kinds[EdgeCreate] != nil {
		q.mu.Lock()
		if q.last.ID == tk.ID {
			q.last.HostEnd = tk.HostEnd
		}
		q.mu.Unlock()
	}
	if subs := v.kinds[TaskEnd]; subs != nil {
		e := Event{Kind: TaskEnd, Stream: q.task, Time: tk.HostEnd, Device: q.Device, Task: *tk}
		deliver(subs, &e)
	}
}

// EndRelease is End followed by Release, in one call: the trace point
// after the enqueue of a command that keeps no Event and reports no device
// times. A disabled trace point (tk nil) costs one test.
func (tk *Task) EndRelease() {
	if tk != nil {
		tk.endRelease()
	}
}

func (tk *Task) endRelease() {
	tk.end()
	tk.release()
}

// Complete reports the device execution times of the task, start and end in
// device nanoseconds (OpenCL's CL_PROFILING_COMMAND_START and _END): it
// aligns them to the host clock (see Device.SyncClock), stores them in tk
// and emits TaskComplete. It does nothing for nil or the zero Task.
func (tk *Task) Complete(start, end int64) {
	if tk != nil && tk.ID != 0 {
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
	v := q.view.Load()
	if v == nil {
		return
	}
	for _, r := range v.files {
		r.taskRec(recTaskComplete, tk)
	}
	if subs := v.kinds[TaskComplete]; subs != nil {
		e := Event{Kind: TaskComplete, Stream: t.task, Time: t.Now(), Device: d, Task: *tk}
		deliver(subs, &e)
	}
}

// MemTraced reports whether memory events of the device have a
// subscriber, so that a caller may skip describing one that nobody reads.
func (d *Device) MemTraced() bool { return d.memView.Load() != nil }

// MemAlloc emits a MemAlloc event for the device. It costs one atomic load
// when StreamMem has no subscriber. d must not be nil, here and in
// MemRelease and CacheEvent.
func (d *Device) MemAlloc(m Mem) {
	if d.memView.Load() != nil {
		d.mem(MemAlloc, &m)
	}
}

// MemRelease emits a MemRelease event for the device. It costs one atomic
// load when StreamMem has no subscriber.
func (d *Device) MemRelease(m Mem) {
	if d.memView.Load() != nil {
		d.mem(MemRelease, &m)
	}
}

// mem emits a memory event: record files first, without an Event.
func (d *Device) mem(k Kind, m *Mem) {
	v := d.memView.Load()
	if v == nil { // unsubscribed since the trace point looked
		return
	}
	now := d.t.Now()
	for _, r := range v.files {
		r.memRec(d, k, m, now)
	}
	if subs := v.kinds[k]; subs != nil {
		d.deliverMem(subs, k, m, now)
	}
}

// deliverMem delivers a memory event to the subscribers that take Events.
func (d *Device) deliverMem(subs []Subscriber, k Kind, m *Mem, now int64) {
	e := Event{Kind: k, Stream: d.t.mem, Time: now, Device: d, Mem: *m}
	deliver(subs, &e)
}

// CacheEvent emits a CacheEvent for the device, at the end of the
// operation. It costs one atomic load when StreamCache has no subscriber.
func (d *Device) CacheEvent(c Cache) {
	if d.t.cache.Enabled() {
		d.emit(Event{Kind: CacheEvent, Cache: c})
	}
}

// emit delivers e on the stream of its kind.
func (d *Device) emit(e Event) {
	s := d.t.mem
	if e.Kind == CacheEvent {
		s = d.t.cache
	}
	subs, recs := s.wanting(e.Kind), s.records(e.Kind)
	if subs == nil && recs == nil {
		return
	}
	e.Stream = s
	e.Time = d.t.Now()
	e.Device = d
	for _, r := range recs {
		r.handle(&e)
	}
	deliver(subs, &e)
}

// keyDepth is the largest number of frames that key the site cache; a
// call site deeper than that above Begin is located with runtime.Callers
// every time.
const keyDepth = 16

// siteMargin is the number of frames that a Begin walks beyond its call
// site's depth in logical frames when it does not know the site's frame yet
// (see shorten): wrapper frames (such as the wrappers of generic
// instantiations) that runtime.Callers elides are in the frame pointer
// chain, and push the call site up by one each.
const siteMargin = 2

// maxSites bounds the site map, which is copied on every addition. A
// call site reached through different chains of callers has one entry per
// chain; past the bound, new chains are located with runtime.Callers every
// time.
const maxSites = 4096

// siteSlots is the size of the site table, the first level of the site
// cache: a direct-mapped table of the sites last used, indexed by the
// key's hash, that Begin reads with one atomic load. The site map behind it
// holds every site, so that two chains that share a slot cost each other a
// map lookup, never a runtime.Callers.
const siteSlots = 1 << siteBits

const siteBits = 9

// siteKey is the key of the site cache: the return addresses of the frames
// from begin up to the one that returns into the call site (see shorten),
// or a little beyond where that frame is not known, zero-padded. Equal keys
// have equal call sites, whatever was inlined where.
type siteKey [keyDepth]uintptr

// hash returns a hash of the first depth entries of k, the key of the site
// map, whose top siteBits bits index the site table: a rotation and an
// exclusive or per word, then one multiplication to mix. Hashing these few
// words is cheaper than the map's hash of the whole array.
func (k *siteKey) hash(depth int) uint64 {
	h := uint64(depth)
	for _, pc := range k[:depth] {
		h = bits.RotateLeft64(h, 23) ^ uint64(pc)
	}
	return h * 0x9e3779b97f4a7c15
}

// site is an entry of the site cache: a node and the key it was reached by.
type site struct {
	node  *Node
	depth int
	key   siteKey // zero beyond depth
}

// lookupSite returns the cached node of (key, kind, name), or nil. A hit
// in the site table is one atomic load and a comparison; a miss there
// looks in the site map (another atomic load and a map lookup) and puts
// what it finds in the table. It allocates nothing.
func (t *Tracer) lookupSite(key *siteKey, depth int, kind CmdKind, name string) *Node {
	if depth == 0 {
		return nil
	}
	h := key.hash(depth)
	if s := t.siteTab[h>>(64-siteBits)].Load(); s != nil && s.is(key, depth, kind, name) {
		return s.node
	}
	return t.lookupMap(h, key, depth, kind, name)
}

// lookupMap is lookupSite's look in the site map, for a key of hash h that
// the site table does not hold.
func (t *Tracer) lookupMap(h uint64, key *siteKey, depth int, kind CmdKind, name string) *Node {
	list := (*t.sites.Load())[h]
	for i := range list {
		if s := &list[i]; s.is(key, depth, kind, name) {
			t.siteTab[h>>(64-siteBits)].Store(s)
			return s.node
		}
	}
	return nil
}

// is reports whether s is the site of (key, depth, kind, name).
func (s *site) is(key *siteKey, depth int, kind CmdKind, name string) bool {
	return s.depth == depth && s.node.Kind == kind && s.key.equal(key, depth) && s.node.Name == name
}

// equal reports whether the first depth words of k and o are equal (keys
// of one depth are zero beyond it).
func (k *siteKey) equal(o *siteKey, depth int) bool {
	for i := range k[:depth] {
		if k[i] != o[i] {
			return false
		}
	}
	return true
}

// newNode returns the node of (pc, kind, name), creating it and emitting
// NodeCreate on first use, and caches it under key unless depth is 0.
func (t *Tracer) newNode(key *siteKey, depth int, pc uintptr, kind CmdKind, name string) *Node {
	t.mu.Lock()
	defer t.mu.Unlock()
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
		n = &Node{ID: id, Kind: kind, Name: name, Func: fn, File: file, Line: line, seq: uint32(len(t.nodeList))}
		t.nodes[id] = n
		t.nodeList = append(t.nodeList, n)
		for _, r := range t.task.records(NodeCreate) {
			r.defineNode(n)
		}
		if subs := t.task.wanting(NodeCreate); subs != nil {
			e := Event{Kind: NodeCreate, Stream: t.task, Time: t.Now(), Node: n}
			deliver(subs, &e)
		}
	}
	sites := *t.sites.Load()
	if depth == 0 || len(sites) >= maxSites {
		return n
	}
	h := key.hash(depth)
	for _, s := range sites[h] {
		if s.node == n && s.key == *key {
			return n
		}
	}
	// Copy on write: readers never lock. The entries of a list are never
	// written after they are published, so the site table may point into
	// them.
	next := make(map[uint64][]site, len(sites)+1)
	for k, v := range sites {
		next[k] = v
	}
	list := append(append([]site(nil), sites[h]...), site{key: *key, depth: depth, node: n})
	next[h] = list
	t.sites.Store(&next)
	t.siteTab[h>>(64-siteBits)].Store(&list[len(list)-1])
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
