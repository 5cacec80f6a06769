package trace

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The record log: the on-disk form that the perfetto and flight
// subscribers write while the program runs.
//
// A file is a sequence of 64-byte slots in a shared mapping of the file
// (MAP_SHARED), so that every record a traced call has written stays in
// the page cache, and reaches the file, whatever way the process ends:
// return, os.Exit, log.Fatal, an unrecovered panic or SIGKILL. Slot 0 is
// the header (header* offsets). The other slots hold records written by
// the traced goroutines themselves: a writer reserves its slots with one
// atomic add, writes the body, then publishes the record by storing its
// first word (kind, flags, check, aux) atomically. A slot whose first word
// is zero holds no record (never written, or a write cut off by the end
// of the process); a record whose check does not match its body (a ring
// slot overwritten while it was read or written) is dropped by readers.
//
// A perfetto file (modeAppend) is one log that grows: definitions (nodes,
// queues, devices, strings) and events, in reservation order. A flight
// file (modeRing) has a definitions log of fixed size and an event ring
// after it, whose slots are reused oldest first.
//
// Records of one slot: header word, then seven body words. Definitions may
// span several slots: the head slot's body holds the fixed fields and the
// string lengths, and continuation slots (recCont, aux = the head's slot
// index) hold the bytes of the strings, 56 per slot.
const (
	slotSize  = 64
	slotWords = 8

	logMagic   = "DGENTRC1"
	modeAppend = 1
	modeRing   = 2
)

// Header fields, byte offsets in slot 0.
const (
	hdrMagic     = 0  // logMagic
	hdrMode      = 8  // modeAppend or modeRing
	hdrDefsStart = 16 // first slot of the definitions log
	hdrDefsSlots = 24 // its size in slots (0: it grows, append mode)
	hdrRingStart = 32 // first slot of the event ring (ring mode)
	hdrRingSlots = 40 // its size in slots
	hdrDrops     = 48 // events dropped (atomic)
	hdrStart     = 56 // the Tracer's start, Unix nanoseconds (its graph id)
)

// Record kinds: the low byte of a record's first word.
const (
	recDevice       uint8 = iota + 1 // aux: device seq; w0 id, w1 name length
	recQueue                         // aux: queue seq; w0 id, w1 device seq, w2 in-order, w3 name length
	recNode                          // aux: node seq; w0 ID, w1 kind, w2 line, w3..w5 lengths of name, func, file
	recString                        // aux: string id; w0 length
	recCont                          // aux: slot index of the head
	recTaskEnd                       // aux: queue seq; flags prev; w0 node seq, w1 task id, w2 instance, w3 host begin, w4 host end, w5 the id of the task before it on its in-order queue (with flag prev: an implicit edge, which readers expand to a recEdge)
	recTaskComplete                  // as recTaskEnd, w5 device start, w6 device end (host clock)
	recEdge                          // aux: target queue seq; flags implicit; w0 from queue seq, w1 to id, w2 from id, w3 to host begin, w4 from host begin, w5 from host end (both 0 for an implicit edge: readers take them from the source's recTaskEnd), w6 to instance<<32 | to node seq
	recMem                           // aux: device seq; flags 1 release, 2 pooled; w0 tag, w1 size, w2 handle, w3 time, w4 tag name id+1 (0: none)
	recCache                         // aux: device seq; flags op; w0 key, w1 duration, w2 time, w3 program id+1
	recRange                         // w0 name id+1, w1 begin, w2 end
	recMark                          // w0 name id+1, w1 time
)

const (
	flagImplicit = 1
	flagPrev     = 1
	flagRelease  = 1
	flagPooled   = 2
)

// contBytes is the number of string bytes a continuation slot holds.
const contBytes = slotSize - 8

// slog is one log of a record file: a range of slots of the mapping that
// grows (append) or wraps (ring).
type slog struct {
	f     *recGen
	start uint64 // first slot
	slots uint64 // size in slots for a ring or a fixed log; 0 for a log that grows
	ring  bool
	next  atomic.Uint64 // slots reserved, from start
}

// reserve reserves n consecutive slots and returns the index of the first,
// or false when the log cannot hold them (counted as a drop by the caller).
func (l *slog) reserve(n uint64) (uint64, bool) {
	s := l.next.Add(n) - n
	if l.ring {
		s &= l.slots - 1   // a power of two
		if s+n > l.slots { // a multi-slot record never wraps
			return 0, false
		}
		return l.start + s, true
	}
	// The common case, in a log that grows: the file holds the slots, and
	// they cross no multiple of prefaultStep.
	if abs := l.start + s; l.slots == 0 && abs+n <= l.f.limit.Load() && s^(s+n) < prefaultStep/slotSize {
		return abs, true
	}
	return l.reserveAt(s, n)
}

// reserveAt is reserve in a log that does not wrap, for the slots from s
// that the file may not hold yet or that cross a multiple of
// prefaultStep.
func (l *slog) reserveAt(s, n uint64) (uint64, bool) {
	if l.slots != 0 && s+n > l.slots {
		return 0, false
	}
	abs := l.start + s
	if abs+n > l.f.limit.Load() && !l.f.grow(abs+n) {
		return 0, false
	}
	if pf := l.f.pf; pf != nil {
		pf.reserved(s, s+n)
	}
	return abs, true
}

// recGen is one generation of a record file (see recFile): one file and
// its mapping, written from its first slot. Its writers run under guard:
// a fault on the mapping (the file truncated under it) drops the record
// and marks the generation damaged.
type recGen struct {
	// What writing an event record reads comes first, together.
	closed atomic.Bool
	mem    unsafe.Pointer // the mapping: maxSlots slots of address space
	ev     *slog
	limit  atomic.Uint64 // slots backed by the file (append mode)
	pf     *prefaulter   // a growing log's, set at open

	f       *os.File
	owner   *recFile       // woken when the generation is damaged; nil in tests
	bad     atomic.Bool    // a fault or a short file showed the file truncated
	anon    bool           // private memory: the file cannot be mapped
	size    uint64         // bytes mapped
	mu      sync.Mutex     // grow
	full    error          // the error that stopped growth, under mu
	drops   *atomic.Uint64 // the Tracer's drop counter, or nil
	defs    *slog
	strs    atomic.Pointer[map[string]uint32]
	nstr    uint32 // strings defined, under strMu
	strMu   sync.Mutex
	defMu   sync.Mutex // serialises queue and device definitions
	queues  defined    // the queues defined in the file, by Queue.Seq
	devices defined    // the devices defined in the file, by Device.Seq

	strCache [64]atomic.Pointer[strEntry] // by the address of a string's bytes
}

// word returns a pointer to word w of slot s.
func (g *recGen) word(s uint64, w int) *uint64 {
	return (*uint64)(unsafe.Add(g.mem, s*slotSize+uint64(w)*8))
}

// strEntry caches the id of a string by the address of its bytes.
type strEntry struct {
	p  *byte
	n  int
	id uint64
}

// check is the 16-bit check of a record body.
func check(body *[7]uint64) uint64 {
	x := body[0] ^ bits.RotateLeft64(body[1], 9) ^ bits.RotateLeft64(body[2], 18) ^ bits.RotateLeft64(body[3], 27) ^
		bits.RotateLeft64(body[4], 36) ^ bits.RotateLeft64(body[5], 45) ^ bits.RotateLeft64(body[6], 54)
	x ^= x >> 32
	x ^= x >> 16
	return x & 0xffff
}

func headWord(kind, flags uint8, aux uint32, body *[7]uint64) uint64 {
	return uint64(kind) | uint64(flags)<<8 | check(body)<<16 | uint64(aux)<<32
}

// put writes a one-slot record to the event log. It never blocks; a
// record the log cannot hold is counted as dropped.
func (g *recGen) put(kind, flags uint8, aux uint32, body *[7]uint64) {
	if p := g.slot(); p != nil {
		*(*[7]uint64)(p[1:]) = *body
		seal(p, kind, flags, aux)
	}
}

// slot reserves a slot of the event log for a one-slot record, whose
// writer fills words 1 to 7 and then seals it. It returns nil when g is
// closed or its log cannot hold the record (a drop, counted).
func (g *recGen) slot() *[slotWords]uint64 {
	if g.closed.Load() {
		return nil
	}
	l := g.ev
	s, ok := l.reserve(1)
	if !ok {
		g.drop(1)
		return nil
	}
	p := (*[slotWords]uint64)(unsafe.Add(g.mem, s*slotSize))
	if l.ring {
		// Unpublish first, so that a reader never pairs the old head
		// with a half-written body.
		publish(&p[0], 0)
	}
	return p
}

// seal publishes the record of slot p, whose body is written.
func seal(p *[slotWords]uint64, kind, flags uint8, aux uint32) {
	publish(&p[0], uint64(kind)|uint64(flags)<<8|check((*[7]uint64)(p[1:]))<<16|uint64(aux)<<32)
}

// putDef writes a definition record with strings to the definitions log.
func (g *recGen) putDef(kind uint8, aux uint32, body *[7]uint64, strs ...string) {
	if g.closed.Load() {
		return
	}
	n := 0
	for _, s := range strs {
		n += len(s)
	}
	conts := uint64((n + contBytes - 1) / contBytes)
	s, ok := g.defs.reserve(1 + conts)
	if !ok {
		g.drop(1)
		return
	}
	buf := make([]byte, 0, n)
	for _, str := range strs {
		buf = append(buf, str...)
	}
	for i := uint64(0); i < conts; i++ {
		slot := s + 1 + i
		chunk := buf[i*contBytes : min(uint64(len(buf)), (i+1)*contBytes)]
		var tmp [contBytes]byte
		copy(tmp[:], chunk)
		for w := 0; w < 7; w++ {
			*g.word(slot, w+1) = binary.LittleEndian.Uint64(tmp[w*8:])
		}
		atomic.StoreUint64(g.word(slot, 0), uint64(recCont)|uint64(uint32(s))<<32)
	}
	p := (*[slotWords]uint64)(unsafe.Add(g.mem, s*slotSize))
	p[1], p[2], p[3], p[4], p[5], p[6], p[7] = body[0], body[1], body[2], body[3], body[4], body[5], body[6]
	atomic.StoreUint64(&p[0], headWord(kind, 0, aux, body))
}

// fullError returns the error that stopped the file's growth, or nil.
func (g *recGen) fullError() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.full
}

// drop counts n dropped events in the file header and the Tracer.
func (g *recGen) drop(n uint64) {
	atomic.AddUint64(g.word(0, hdrDrops/8), n)
	if g.drops != nil {
		g.drops.Add(n)
	}
}

// Dropped returns the number of events dropped so far.
func (g *recGen) dropped() uint64 { return atomic.LoadUint64(g.word(0, hdrDrops/8)) }

// str returns the id+1 of s in the file, defining it on first use; 0 for
// the empty string.
func (g *recGen) str(s string) uint64 {
	if s == "" {
		return 0
	}
	// A string from the same place (an allocation tag's name, a range's
	// literal name) has the same bytes: look it up by address first.
	p := unsafe.StringData(s)
	if c := g.strCache[uintptr(unsafe.Pointer(p))>>3%uintptr(len(g.strCache))].Load(); c != nil && c.p == p && c.n == len(s) {
		return c.id
	}
	return g.define(s)
}

// define returns the id+1 of s, which is not empty and not in the string
// cache, defining it on first use.
func (g *recGen) define(s string) uint64 {
	p := unsafe.StringData(s)
	slot := &g.strCache[uintptr(unsafe.Pointer(p))>>3%uintptr(len(g.strCache))]
	if id, ok := (*g.strs.Load())[s]; ok {
		slot.Store(&strEntry{p: p, n: len(s), id: uint64(id) + 1})
		return uint64(id) + 1
	}
	g.strMu.Lock()
	defer g.strMu.Unlock()
	old := *g.strs.Load()
	if id, ok := old[s]; ok {
		return uint64(id) + 1
	}
	id := g.nstr
	g.nstr++
	g.putDef(recString, id, &[7]uint64{uint64(len(s))}, s)
	next := make(map[string]uint32, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[s] = id
	g.strs.Store(&next)
	return uint64(id) + 1
}

// defineQueue writes the definitions of q and its device unless this file
// has them.
func (g *recGen) defineQueue(q *Queue) {
	if g.queues.has(q.Seq) {
		return
	}
	g.defineDevice(q.Device)
	g.defMu.Lock()
	defer g.defMu.Unlock()
	if g.queues.has(q.Seq) {
		return
	}
	in := uint64(0)
	if q.InOrder {
		in = 1
	}
	g.putDef(recQueue, uint32(q.Seq), &[7]uint64{uint64(q.ID), uint64(q.Device.Seq), in, uint64(len(q.Name))}, q.Name)
	g.queues.set(q.Seq)
	q.defIn.CompareAndSwap(nil, g)
}

func (g *recGen) defineDevice(d *Device) {
	if g.devices.has(d.Seq) {
		return
	}
	g.defMu.Lock()
	defer g.defMu.Unlock()
	if g.devices.has(d.Seq) {
		return
	}
	g.putDef(recDevice, uint32(d.Seq), &[7]uint64{uint64(d.ID), uint64(len(d.Name))}, d.Name)
	g.devices.set(d.Seq)
	d.defIn.CompareAndSwap(nil, g)
}

// defined is a set of small numbers (queue or device seqs) read without a
// lock: the first fastDefs numbers in flags, others in a map under mu.
type defined struct {
	flags [fastDefs]atomic.Bool
	mu    sync.Mutex
	more  map[int]bool
}

const fastDefs = 256

func (d *defined) has(i int) bool {
	if i < fastDefs {
		return d.flags[i].Load()
	}
	return d.hasMore(i)
}

func (d *defined) hasMore(i int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.more[i]
}

func (d *defined) set(i int) {
	if i < fastDefs {
		d.flags[i].Store(true)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.more == nil {
		d.more = make(map[int]bool)
	}
	d.more[i] = true
}

func (g *recGen) defineNode(n *Node) {
	g.putDef(recNode, n.seq, &[7]uint64{n.ID, uint64(n.Kind), uint64(int64(n.Line)),
		uint64(len(n.Name)), uint64(len(n.Func)), uint64(len(n.File))}, n.Name, n.Func, n.File)
}

// handle writes the record of one event: the path of events that the
// trace points deliver as Event values (nodes, cache events, user ranges
// and marks, and Subscribe's replay); the frequent ones come through
// taskRec, edge and mem without an Event.
func (g *recGen) handle(e *Event) {
	if g.closed.Load() {
		return
	}
	var body [7]uint64
	switch e.Kind {
	case NodeCreate:
		g.defineNode(e.Node)
	case TaskEnd:
		g.taskRec(recTaskEnd, &e.Task)
	case TaskComplete:
		g.taskRec(recTaskComplete, &e.Task)
	case EdgeCreate:
		g.edge(&e.Task, &e.From, e.Implicit)
	case MemAlloc, MemRelease:
		g.memRec(e.Device, e.Kind, &e.Mem, e.Time)
	case CacheEvent:
		g.defineDevice(e.Device)
		body = [7]uint64{e.Cache.Key, uint64(e.Cache.Duration), uint64(e.Time), g.str(e.Cache.Program)}
		g.put(recCache, uint8(e.Cache.Op), uint32(e.Device.Seq), &body)
	case UserRange:
		body = [7]uint64{g.str(e.Name), uint64(e.Begin), uint64(e.Time)}
		g.put(recRange, 0, 0, &body)
	case UserMark:
		body = [7]uint64{g.str(e.Name), uint64(e.Time)}
		g.put(recMark, 0, 0, &body)
	}
}

// taskRec writes the recTaskEnd or recTaskComplete record of tk. It is the
// hot path of the perfetto and flight subscribers: no lock, no allocation
// once the task's queue is defined.
func (g *recGen) taskRec(kind uint8, tk *Task) {
	q := tk.Queue
	if q.defIn.Load() != g && !g.queues.has(q.Seq) {
		if g.closed.Load() {
			return
		}
		g.defineQueue(q)
	}
	p := g.slot()
	if p == nil {
		return
	}
	w5, fl := uint64(tk.DevStart), uint8(0)
	if kind == recTaskEnd && tk.prev != 0 {
		// The implicit edge from the queue's previous task rides along.
		w5, fl = tk.prev, flagPrev
	}
	p[1], p[2], p[3], p[4], p[5], p[6], p[7] = uint64(tk.Node.seq), tk.ID, tk.Instance, uint64(tk.HostBegin), uint64(tk.HostEnd), w5, uint64(tk.DevEnd)
	seal(p, kind, fl, uint32(q.Seq))
}

// edge writes the recEdge record of a dependency of to on from.
func (g *recGen) edge(to, from *Task, implicit bool) {
	if !g.queues.has(to.Queue.Seq) || !g.queues.has(from.Queue.Seq) {
		if g.closed.Load() {
			return
		}
		g.defineQueue(to.Queue)
		g.defineQueue(from.Queue)
	}
	var fl uint8
	if implicit {
		fl = flagImplicit
	}
	body := [7]uint64{uint64(from.Queue.Seq), to.ID, from.ID, uint64(to.HostBegin), uint64(from.HostBegin), uint64(from.HostEnd), to.Instance<<32 | uint64(to.Node.seq)}
	g.put(recEdge, fl, uint32(to.Queue.Seq), &body)
}

// memRec writes the recMem record of a memory event.
func (g *recGen) memRec(d *Device, k Kind, m *Mem, now int64) {
	if d.defIn.Load() != g && !g.devices.has(d.Seq) {
		if g.closed.Load() {
			return
		}
		g.defineDevice(d)
	}
	var fl uint8
	if k == MemRelease {
		fl |= flagRelease
	}
	if m.Pooled {
		fl |= flagPooled
	}
	name := g.str(m.TagName)
	if p := g.slot(); p != nil {
		p[1], p[2], p[3], p[4], p[5], p[6], p[7] = m.Tag, uint64(m.Size), m.Handle, uint64(now), name, 0, 0
		seal(p, recMem, fl, uint32(d.Seq))
	}
}

// recWants reports the kinds a record file stores.
func recWants(k Kind) bool { return k != GraphCreate && k != TaskBegin }

// writeError wraps the error of a built-in subscriber's file.
type writeError struct {
	op  string
	err error
}

func (e *writeError) Error() string { return "trace: " + e.op + ": " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// sizeError describes a bad size= value.
func sizeError(v string) error {
	return fmt.Errorf("size=%s: want a byte count such as 64M, 512K or 1G (at least 64K)", v)
}
