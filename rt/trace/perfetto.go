package trace

import (
	"io"
	"strconv"
	"unicode/utf8"
)

// The categories of the slices the perfetto subscriber writes; ReadSummary
// reads the first two.
const (
	catHost   = "host"
	catDevice = "device"
	catMem    = "mem"
	catCache  = "cache"
	catDep    = "dep"
	catLaunch = "launch"
	catRange  = "range"
)

// Track ids (Chrome trace "tid") of the perfetto subscriber.
const (
	hostPid     = 1
	laneStride  = 1000 // tid of lane l of queue q: 1 + q.Seq + l*laneStride
	maxLanes    = 64
	maxLaneOf   = 1 << 20
	memTidBase  = 1_000_000
	cacheTidBas = 2_000_000
	rangeTid    = 3_000_000 // user ranges and marks before any queue exists
)

// jsonWriter writes Chrome trace event JSON, which ui.perfetto.dev and
// chrome://tracing open, from events in time order (the converter of record
// files, readLog, supplies them):
//
//   - process 1 "dgen host" has one thread per queue holding the host
//     enqueue slices ("X", cat "host"), and per device a memory thread
//     (instant events and a driver-memory counter) and a cache thread;
//   - process 2+n "device n: NAME" has one thread per queue holding the
//     device execution slices (cat "device");
//   - every dependency is a flow ("s" then "f" with "bp":"e", cat "dep")
//     from the middle of the source's host slice to the middle of the
//     target's, and each launch a flow (cat "launch") from the host slice
//     to the device slice;
//   - user ranges (Tracer.Range) are slices (cat "range") and marks
//     (Tracer.Mark) instant events on the host track of every queue, so
//     that the commands enqueued within a range nest under it;
//   - names are metadata events ("M" process_name and thread_name);
//   - events that the writer of the record file had to drop are counted
//     in a global instant event named "dgen: N events dropped".
//
// The file is in the JSON Array Format. Slices that overlap on one queue
// (concurrent enqueues from several goroutines) go to extra lanes, named
// "QUEUE #2" and so on, so that every track nests properly.
type jsonWriter struct {
	w       io.Writer
	out     []byte // formatted events not yet written
	werr    error  // the first write error
	n       int
	named   map[[2]int]bool
	lanes   map[[2]int][]int64 // (pid, queue seq) -> end of last slice per lane
	laneOf  map[[2]uint64]int  // (pid, task id) -> lane, for lanes other than 0
	pending map[uint64][]Event // edges by target task id, until the target ends
	spare   [][]Event          // emptied lists of pending, for reuse
	live    map[*Device]int64  // driver bytes per device
	static  map[*Node][]byte   // per-node tail of slice events
	hosts   []int              // host tids of lane 0 of every queue, for ranges
	flow    uint64
	last    int64 // the latest time written
}

// maxSpare is the number of emptied edge lists kept for reuse.
const maxSpare = 64

func newJSONWriter(w io.Writer) *jsonWriter {
	p := &jsonWriter{
		w:       w,
		named:   make(map[[2]int]bool),
		lanes:   make(map[[2]int][]int64),
		laneOf:  make(map[[2]uint64]int),
		pending: make(map[uint64][]Event),
		live:    make(map[*Device]int64),
		static:  make(map[*Node][]byte),
	}
	p.out = append(p.out, '[')
	p.meta(hostPid, 0, "process_name", "dgen host")
	return p
}

// flushAt is the size of formatted output at which it is written.
const flushAt = 1 << 16

// add formats e, writing the output when enough is buffered.
func (p *jsonWriter) add(e *Event) {
	p.format(e)
	if e.Time > p.last {
		p.last = e.Time
	}
	if len(p.out) >= flushAt {
		p.writeOut()
	}
}

// finish writes the drop count, if any, and the closing bracket, and
// returns the first write error.
func (p *jsonWriter) finish(dropped uint64) error {
	if dropped > 0 {
		b := p.begin()
		b = append(b, `{"ph":"i","s":"g","cat":"dgen","name":"dgen: `...)
		b = strconv.AppendUint(b, dropped, 10)
		b = append(b, ` events dropped"`...)
		b = p.pos(b, hostPid, 0, p.last)
		b = append(b, `,"args":{"dropped":`...)
		b = strconv.AppendUint(b, dropped, 10)
		b = append(b, "}}"...)
		p.end(b)
	}
	p.out = append(p.out, "\n]\n"...)
	p.writeOut()
	return p.werr
}

// writeOut writes the formatted events unless a write failed before.
func (p *jsonWriter) writeOut() {
	if p.werr == nil && len(p.out) > 0 {
		if _, err := p.w.Write(p.out); err != nil {
			p.werr = err
		}
	}
	p.out = p.out[:0]
}

// format appends the JSON of e to p.out.
func (p *jsonWriter) format(e *Event) {
	switch e.Kind {
	case EdgeCreate:
		if e.Task.HostEnd != 0 {
			p.edge(e)
		} else {
			edges, ok := p.pending[e.Task.ID]
			if !ok && len(p.spare) > 0 {
				edges, p.spare = p.spare[len(p.spare)-1], p.spare[:len(p.spare)-1]
			}
			p.pending[e.Task.ID] = append(edges, *e)
		}
	case TaskEnd:
		tk := &e.Task
		lane := p.lane(hostPid, tk.Queue, tk.HostBegin, tk.HostEnd, tk.ID)
		p.slice(catHost, hostPid, p.queueTid(hostPid, tk.Queue, lane), tk.HostBegin, tk.HostEnd, tk)
		if edges, ok := p.pending[tk.ID]; ok {
			delete(p.pending, tk.ID)
			for i := range edges {
				edges[i].Task = *tk
				p.edge(&edges[i])
			}
			if len(p.spare) < maxSpare {
				clear(edges)
				p.spare = append(p.spare, edges[:0])
			}
		}
	case TaskComplete:
		tk := &e.Task
		pid := devicePid(tk.Queue.Device)
		lane := p.lane(pid, tk.Queue, tk.DevStart, tk.DevEnd, tk.ID)
		tid := p.queueTid(pid, tk.Queue, lane)
		p.slice(catDevice, pid, tid, tk.DevStart, tk.DevEnd, tk)
		if tk.HostEnd != 0 {
			p.flow++
			hl := p.laneOf[[2]uint64{hostPid, tk.ID}]
			p.flowEnd("s", catLaunch, hostPid, p.queueTid(hostPid, tk.Queue, hl), mid(tk.HostBegin, tk.HostEnd))
			p.flowEnd("f", catLaunch, pid, tid, mid(tk.DevStart, tk.DevEnd))
		}
	case MemAlloc, MemRelease:
		d := e.Device
		tid := memTidBase + d.Seq
		p.threadName(hostPid, tid, "memory "+d.Name)
		name := "alloc"
		if e.Kind == MemRelease {
			name = "release"
		}
		if e.Mem.TagName != "" {
			name += " " + e.Mem.TagName
		}
		b := p.begin()
		b = append(b, `{"ph":"i","s":"t","cat":"mem","name":`...)
		b = appendJSONString(b, name)
		b = p.pos(b, hostPid, tid, e.Time)
		b = append(b, `,"args":{"size":`...)
		b = strconv.AppendInt(b, e.Mem.Size, 10)
		b = append(b, `,"tag":`...)
		b = strconv.AppendUint(b, e.Mem.Tag, 10)
		b = append(b, `,"pooled":`...)
		b = strconv.AppendBool(b, e.Mem.Pooled)
		b = append(b, "}}"...)
		if !e.Mem.Pooled {
			if e.Kind == MemAlloc {
				p.live[d] += e.Mem.Size
			} else {
				p.live[d] -= e.Mem.Size
			}
			b = append(b, ",\n"...)
			b = append(b, `{"ph":"C","cat":"mem","name":`...)
			b = appendJSONString(b, "driver memory "+d.Name)
			b = p.pos(b, hostPid, tid, e.Time)
			b = append(b, `,"args":{"bytes":`...)
			b = strconv.AppendInt(b, p.live[d], 10)
			b = append(b, "}}"...)
		}
		p.end(b)
	case UserRange, UserMark:
		p.userEvent(e)
	case CacheEvent:
		d := e.Device
		tid := cacheTidBas + d.Seq
		p.threadName(hostPid, tid, "cache "+d.Name)
		name := e.Cache.Op.String() + " " + e.Cache.Program
		b := p.begin()
		if e.Cache.Duration > 0 {
			b = append(b, `{"ph":"X","cat":"cache","name":`...)
			b = appendJSONString(b, name)
			b = p.pos(b, hostPid, tid, e.Time-e.Cache.Duration)
			b = append(b, `,"dur":`...)
			b = appendMicros(b, e.Cache.Duration)
		} else {
			b = append(b, `{"ph":"i","s":"t","cat":"cache","name":`...)
			b = appendJSONString(b, name)
			b = p.pos(b, hostPid, tid, e.Time)
		}
		b = append(b, `,"args":{"op":"`...)
		b = append(b, e.Cache.Op.String()...)
		b = append(b, `","program":`...)
		b = appendJSONString(b, e.Cache.Program)
		b = append(b, `,"key":"`...)
		b = appendHex(b, e.Cache.Key)
		b = append(b, `"}}`...)
		p.end(b)
	}
}

// userEvent writes a user range or mark on the host track (lane 0) of
// every queue seen so far, or on a track of its own before any.
func (p *jsonWriter) userEvent(e *Event) {
	tids := p.hosts
	if len(tids) == 0 {
		p.threadName(hostPid, rangeTid, "user ranges")
		tids = []int{rangeTid}
	}
	for _, tid := range tids {
		b := p.begin()
		if e.Kind == UserRange {
			b = append(b, `{"ph":"X","cat":"range","name":`...)
			b = appendJSONString(b, e.Name)
			b = p.pos(b, hostPid, tid, e.Begin)
			b = append(b, `,"dur":`...)
			b = appendMicros(b, e.Time-e.Begin)
		} else {
			b = append(b, `{"ph":"i","s":"t","cat":"range","name":`...)
			b = appendJSONString(b, e.Name)
			b = p.pos(b, hostPid, tid, e.Time)
		}
		b = append(b, '}')
		p.end(b)
	}
}

// edge writes the flow of an EdgeCreate event whose target has ended.
func (p *jsonWriter) edge(e *Event) {
	from, to := &e.From, &e.Task
	fts := from.HostBegin
	if from.HostEnd != 0 {
		fts = mid(from.HostBegin, from.HostEnd)
	}
	p.flow++
	fl := p.laneOf[[2]uint64{hostPid, from.ID}]
	tl := p.laneOf[[2]uint64{hostPid, to.ID}]
	p.flowEnd("s", catDep, hostPid, p.queueTid(hostPid, from.Queue, fl), fts)
	p.flowEnd("f", catDep, hostPid, p.queueTid(hostPid, to.Queue, tl), mid(to.HostBegin, to.HostEnd))
}

func mid(a, b int64) int64 { return a + (b-a)/2 }

func devicePid(d *Device) int { return 2 + d.Seq }

// lane returns the first lane of the queue's track on pid whose slices all
// end by begin, and records end as that lane's end.
func (p *jsonWriter) lane(pid int, q *Queue, begin, end int64, task uint64) int {
	k := [2]int{pid, q.Seq}
	ends := p.lanes[k]
	l := 0
	for l < len(ends) && ends[l] > begin {
		l++
	}
	if l == maxLanes {
		l = maxLanes - 1
	}
	if l == len(ends) {
		ends = append(ends, end)
		p.lanes[k] = ends
	} else if end > ends[l] {
		ends[l] = end
	}
	if l != 0 {
		if len(p.laneOf) >= maxLaneOf {
			// Bound the memory: flows from older tasks on extra
			// lanes will point at lane 0.
			clear(p.laneOf)
		}
		p.laneOf[[2]uint64{uint64(pid), task}] = l
	}
	return l
}

// queueTid returns the thread id of a queue's lane, naming it on first use.
func (p *jsonWriter) queueTid(pid int, q *Queue, lane int) int {
	tid := 1 + q.Seq + lane*laneStride
	if !p.named[[2]int{pid, tid}] {
		if pid != hostPid {
			p.procName(pid, "device "+strconv.Itoa(q.Device.ID)+": "+q.Device.Name)
		}
		name := "queue " + q.Name
		if pid == hostPid {
			name += " (" + q.Device.Name + ")"
			if lane == 0 {
				p.hosts = append(p.hosts, tid)
			}
		}
		if lane > 0 {
			name += " #" + strconv.Itoa(lane+1)
		}
		p.threadName(pid, tid, name)
	}
	return tid
}

func (p *jsonWriter) procName(pid int, name string) {
	if !p.named[[2]int{pid, 0}] {
		p.named[[2]int{pid, 0}] = true
		p.meta(pid, 0, "process_name", name)
	}
}

func (p *jsonWriter) threadName(pid, tid int, name string) {
	if !p.named[[2]int{pid, tid}] {
		p.named[[2]int{pid, tid}] = true
		p.meta(pid, tid, "thread_name", name)
	}
}

func (p *jsonWriter) meta(pid, tid int, kind, name string) {
	p.named[[2]int{pid, tid}] = true
	b := p.begin()
	b = append(b, `{"ph":"M","name":"`...)
	b = append(b, kind...)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"args":{"name":`...)
	b = appendJSONString(b, name)
	b = append(b, "}}"...)
	p.end(b)
}

// slice writes a complete event for a task. The part that depends on the
// node only is formatted once per node.
func (p *jsonWriter) slice(cat string, pid, tid int, begin, end int64, tk *Task) {
	n := tk.Node
	tail, ok := p.static[n]
	if !ok {
		tail = append(tail, `"node":"`...)
		tail = appendHex(tail, n.ID)
		tail = append(tail, `","kind":"`...)
		tail = append(tail, n.Kind.String()...)
		tail = append(tail, `","func":`...)
		tail = appendJSONString(tail, n.Func)
		tail = append(tail, `,"file":`...)
		tail = appendJSONString(tail, n.File)
		tail = append(tail, `,"line":`...)
		tail = strconv.AppendInt(tail, int64(n.Line), 10)
		tail = append(tail, `},"name":`...)
		tail = appendJSONString(tail, n.Name)
		tail = append(tail, '}')
		p.static[n] = tail
	}
	b := p.begin()
	b = append(b, `{"ph":"X","cat":"`...)
	b = append(b, cat...)
	b = append(b, '"')
	b = p.pos(b, pid, tid, begin)
	b = append(b, `,"dur":`...)
	b = appendMicros(b, end-begin)
	b = append(b, `,"args":{"task":`...)
	b = strconv.AppendUint(b, tk.ID, 10)
	b = append(b, `,"instance":`...)
	b = strconv.AppendUint(b, tk.Instance, 10)
	b = append(b, ',')
	b = append(b, tail...)
	p.end(b)
}

func (p *jsonWriter) flowEnd(ph, cat string, pid, tid int, ts int64) {
	b := p.begin()
	b = append(b, `{"ph":"`...)
	b = append(b, ph...)
	if ph == "f" {
		b = append(b, `","bp":"e`...)
	}
	b = append(b, `","cat":"`...)
	b = append(b, cat...)
	b = append(b, `","name":"`...)
	b = append(b, cat...)
	b = append(b, `","id":`...)
	b = strconv.AppendUint(b, p.flow, 10)
	b = p.pos(b, pid, tid, ts)
	b = append(b, '}')
	p.end(b)
}

// pos appends the pid, tid and ts fields.
func (p *jsonWriter) pos(b []byte, pid, tid int, ts int64) []byte {
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"ts":`...)
	return appendMicros(b, ts)
}

// begin returns the buffer to append the next event to, with its
// separator: the unwritten events, so that an event is formatted in place.
func (p *jsonWriter) begin() []byte {
	b := p.out
	if p.n > 0 {
		b = append(b, ',')
	}
	p.n++
	return append(b, '\n')
}

// end takes back the buffer with the event appended.
func (p *jsonWriter) end(b []byte) { p.out = b }

const hexDigits = "0123456789abcdef"

// appendHex appends v as 16 hexadecimal digits.
func appendHex(b []byte, v uint64) []byte {
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hexDigits[v>>uint(i)&0xf])
	}
	return b
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
