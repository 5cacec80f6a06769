package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// recLog is the content of a record file, decoded: its definitions and
// its event records in time order, 72 bytes each; writeJSON builds the
// Event of one record at a time, so that converting a large file takes
// little more memory than its records.
type recLog struct {
	ring    bool
	start   int64  // the Tracer's start, Unix nanoseconds
	dropped uint64 // events dropped by the writer, and records unreadable here
	d       *defs
	recs    []rawRec
	hosts   map[uint64][2]int64 // host times of the tasks that are sources of implicit edges
}

type rawRec struct {
	kind, flags uint8
	aux         uint32
	w           [7]uint64
	slot        uint64
}

// IsRecordFile reports whether data begins like a record file, the form in
// which the perfetto and flight subscribers write while a program runs.
func IsRecordFile(data []byte) bool {
	return len(data) >= slotSize && string(data[:len(logMagic)]) == logMagic
}

// readLog decodes a record file: the bytes of a whole file or of one cut
// off anywhere. Slots with no record (a write cut off by the end of the
// process) are skipped; records that fail their check or refer to a
// definition that is missing are counted as dropped.
func readLog(data []byte) (*recLog, error) {
	if !IsRecordFile(data) {
		return nil, errors.New("not a dgen record file")
	}
	u := func(off int) uint64 { return binary.LittleEndian.Uint64(data[off:]) }
	l := &recLog{ring: u(hdrMode) == modeRing, start: int64(u(hdrStart)), dropped: u(hdrDrops)}
	nslots := uint64(len(data) / slotSize)
	slotWord := func(s uint64, w int) uint64 { return u(int(s)*slotSize + w*8) }
	read := func(s uint64) (rawRec, bool) {
		h := slotWord(s, 0)
		if h == 0 {
			return rawRec{}, false
		}
		r := rawRec{kind: uint8(h), flags: uint8(h >> 8), aux: uint32(h >> 32), slot: s}
		for i := range r.w {
			r.w[i] = slotWord(s, i+1)
		}
		if r.kind != recCont && check(&r.w) != h>>16&0xffff {
			l.dropped++
			return rawRec{}, false
		}
		return r, true
	}
	d := newDefs()
	evs := make([]rawRec, 0, nslots) // about one a slot: growing it would move every record
	scan := func(from, to uint64) {
		for s := from; s < to && s < nslots; s++ {
			r, ok := read(s)
			if !ok || r.kind == recCont {
				continue
			}
			if r.kind <= recString {
				s += d.add(r, data, nslots, slotWord)
				continue
			}
			evs = append(evs, r)
			if r.kind == recTaskEnd && r.flags&flagPrev != 0 {
				evs = append(evs, implicitEdge(&r))
			}
		}
	}
	if l.ring {
		defsEnd := u(hdrDefsStart) + u(hdrDefsSlots)
		scan(u(hdrDefsStart), defsEnd)
		ringStart := u(hdrRingStart)
		scan(ringStart, ringStart+u(hdrRingSlots))
	} else {
		scan(1, nslots)
	}
	d.link()
	l.d, l.recs = d, evs
	// Implicit edges carry the id of their source only: its host times
	// come from its task_end record, if the file still has it.
	l.hosts = map[uint64][2]int64{}
	for i := range evs {
		if r := &evs[i]; r.kind == recEdge && r.w[4] == 0 && r.w[5] == 0 {
			l.hosts[r.w[2]] = [2]int64{}
		}
	}
	for i := range evs {
		if r := &evs[i]; r.kind == recTaskEnd {
			if _, ok := l.hosts[r.w[1]]; ok {
				l.hosts[r.w[1]] = [2]int64{int64(r.w[3]), int64(r.w[4])}
			}
		}
	}
	sortByTime(l.recs)
	return l, nil
}

// sortByTime orders recs by recTime, keeping the order of records of equal
// times. It sorts keys of 16 bytes, not the records, and moves each record
// once.
func sortByTime(recs []rawRec) {
	type key struct {
		t int64
		i int
	}
	keys := make([]key, len(recs))
	for i := range recs {
		keys[i] = key{recTime(&recs[i]), i}
	}
	if slices.IsSortedFunc(keys, func(a, b key) int { return cmp.Compare(a.t, b.t) }) {
		return
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.i, b.i)) })
	sorted := make([]rawRec, len(recs))
	for j, k := range keys {
		sorted[j] = recs[k.i]
	}
	copy(recs, sorted)
}

// implicitEdge returns the recEdge record of the implicit edge that a
// recTaskEnd record with flagPrev carries: from the task before it on its
// in-order queue, at its host begin, with the source's times left to the
// source's own recTaskEnd.
func implicitEdge(r *rawRec) rawRec {
	w := &r.w
	return rawRec{kind: recEdge, flags: flagImplicit, aux: r.aux, slot: r.slot,
		w: [7]uint64{uint64(r.aux), w[1], w[5], w[3], 0, 0, w[2]<<32 | w[0]}}
}

// recTime is the time of the event of an event record: the Time of the
// Event that d.event builds.
func recTime(r *rawRec) int64 {
	w := &r.w
	switch r.kind {
	case recTaskEnd:
		return int64(w[4])
	case recTaskComplete:
		return max(int64(w[4]), int64(w[6]))
	case recEdge, recMem:
		return int64(w[3])
	case recCache, recRange:
		return int64(w[2])
	case recMark:
		return int64(w[1])
	}
	return 0
}

// each calls f with the Event of every record, in time order, and returns
// the number of records whose definitions are missing. Every call gets the
// same Event, refilled: f copies what it keeps.
func (l *recLog) each(f func(e *Event)) (missing uint64) {
	var e Event // one allocation for the whole log, since f takes its address
	for i := range l.recs {
		var ok bool
		e, ok = l.d.event(&l.recs[i])
		if !ok {
			missing++
			continue
		}
		if e.Kind == EdgeCreate && e.From.HostBegin == 0 && e.From.HostEnd == 0 {
			h := l.hosts[e.From.ID]
			if h[1] == 0 {
				continue // its source left the ring: no flow to draw
			}
			e.From.HostBegin, e.From.HostEnd = h[0], h[1]
		}
		f(&e)
	}
	return missing
}

// defs are the definitions of a record file.
type defs struct {
	devices map[uint32]*Device
	queues  map[uint32]*Queue
	qdev    map[uint32]uint32 // queue seq -> device seq
	nodes   map[uint32]*Node
	strs    map[uint32]string
}

func newDefs() *defs {
	return &defs{devices: map[uint32]*Device{}, queues: map[uint32]*Queue{}, qdev: map[uint32]uint32{},
		nodes: map[uint32]*Node{}, strs: map[uint32]string{}}
}

// add records a definition and returns the number of continuation slots
// it spans; a definition whose strings are cut off is ignored.
func (d *defs) add(r rawRec, data []byte, nslots uint64, word func(uint64, int) uint64) uint64 {
	var lens []uint64
	switch r.kind {
	case recDevice:
		lens = []uint64{r.w[1]}
	case recQueue:
		lens = []uint64{r.w[3]}
	case recNode:
		lens = []uint64{r.w[3], r.w[4], r.w[5]}
	case recString:
		lens = []uint64{r.w[0]}
	}
	total := uint64(0)
	for _, n := range lens {
		total += n
	}
	conts := (total + contBytes - 1) / contBytes
	if total > 1<<24 || r.slot+conts >= nslots {
		return 0
	}
	buf := make([]byte, 0, conts*contBytes)
	for i := uint64(1); i <= conts; i++ {
		h := word(r.slot+i, 0)
		if uint8(h) != recCont || uint32(h>>32) != uint32(r.slot) {
			return 0 // cut off: the head was published after its continuations, so this is a torn file
		}
		off := int(r.slot+i) * slotSize
		buf = append(buf, data[off+8:off+slotSize]...)
	}
	strs := make([]string, len(lens))
	at := uint64(0)
	for i, n := range lens {
		strs[i] = string(buf[at : at+n])
		at += n
	}
	switch r.kind {
	case recDevice:
		d.devices[r.aux] = &Device{ID: int(r.w[0]), Name: strs[0], Seq: int(r.aux)}
	case recQueue:
		d.queues[r.aux] = &Queue{ID: int(r.w[0]), Name: strs[0], InOrder: r.w[2] != 0, Seq: int(r.aux)}
		d.qdev[r.aux] = uint32(r.w[1])
	case recNode:
		d.nodes[r.aux] = &Node{ID: r.w[0], Kind: CmdKind(r.w[1]), Line: int(int64(r.w[2])), Name: strs[0], Func: strs[1], File: strs[2], seq: r.aux}
	case recString:
		d.strs[r.aux] = strs[0]
	}
	return conts
}

// link gives every queue its device; a queue whose device is missing is
// dropped.
func (d *defs) link() {
	for seq, q := range d.queues {
		dev, ok := d.devices[d.qdev[seq]]
		if !ok {
			delete(d.queues, seq)
			continue
		}
		q.Device = dev
	}
}

func (d *defs) str(id uint64) (string, bool) {
	if id == 0 {
		return "", true
	}
	s, ok := d.strs[uint32(id-1)]
	return s, ok
}

// event rebuilds the Event of a record; false when a definition it refers
// to is missing.
func (d *defs) event(r *rawRec) (Event, bool) {
	w := &r.w
	switch r.kind {
	case recTaskEnd, recTaskComplete:
		q, n := d.queues[r.aux], d.nodes[uint32(w[0])]
		if q == nil || n == nil {
			return Event{}, false
		}
		tk := Task{ID: w[1], Node: n, Queue: q, Instance: w[2], HostBegin: int64(w[3]), HostEnd: int64(w[4])}
		e := Event{Kind: TaskEnd, Time: tk.HostEnd, Device: q.Device, Task: tk}
		if r.kind == recTaskComplete {
			e.Kind = TaskComplete
			e.Task.DevStart, e.Task.DevEnd = int64(w[5]), int64(w[6])
			e.Time = max(tk.HostEnd, e.Task.DevEnd)
		}
		return e, true
	case recEdge:
		to, from, n := d.queues[r.aux], d.queues[uint32(w[0])], d.nodes[uint32(w[6])]
		if to == nil || from == nil || n == nil {
			return Event{}, false
		}
		return Event{Kind: EdgeCreate, Implicit: r.flags&flagImplicit != 0, Time: int64(w[3]), Device: to.Device,
			Task: Task{ID: w[1], Queue: to, Node: n, Instance: w[6] >> 32, HostBegin: int64(w[3])},
			From: Task{ID: w[2], Queue: from, HostBegin: int64(w[4]), HostEnd: int64(w[5])}}, true
	case recMem:
		dev := d.devices[r.aux]
		name, ok := d.str(w[4])
		if dev == nil || !ok {
			return Event{}, false
		}
		k := MemAlloc
		if r.flags&flagRelease != 0 {
			k = MemRelease
		}
		return Event{Kind: k, Time: int64(w[3]), Device: dev,
			Mem: Mem{Tag: w[0], TagName: name, Size: int64(w[1]), Pooled: r.flags&flagPooled != 0, Handle: w[2]}}, true
	case recCache:
		dev := d.devices[r.aux]
		prog, ok := d.str(w[3])
		if dev == nil || !ok {
			return Event{}, false
		}
		return Event{Kind: CacheEvent, Time: int64(w[2]), Device: dev,
			Cache: Cache{Op: CacheOp(r.flags), Program: prog, Key: w[0], Duration: int64(w[1])}}, true
	case recRange:
		name, ok := d.str(w[0])
		return Event{Kind: UserRange, Name: name, Begin: int64(w[1]), Time: int64(w[2])}, ok
	case recMark:
		name, ok := d.str(w[0])
		return Event{Kind: UserMark, Name: name, Time: int64(w[1])}, ok
	}
	return Event{}, false
}

// writeJSON writes the events of l as Chrome trace event JSON.
func (l *recLog) writeJSON(w io.Writer) error {
	p := newJSONWriter(w)
	missing := l.each(p.add)
	return p.finish(l.dropped + missing)
}

// Convert writes to w, as Chrome trace event JSON (the JSON Array Format,
// which ui.perfetto.dev and chrome://tracing open), the trace in data: a
// record file that the perfetto or flight subscriber wrote, whole or cut
// off by the end of its process, or a JSON trace, which is copied with its
// closing bracket added if it lacks one.
func Convert(w io.Writer, data []byte) error {
	if IsRecordFile(data) {
		l, err := readLog(data)
		if err != nil {
			return err
		}
		return l.writeJSON(w)
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || (t[0] != '[' && t[0] != '{') {
		return errors.New("neither a dgen record file nor a JSON trace")
	}
	if _, err := w.Write(t); err != nil {
		return err
	}
	if t[0] == '[' && t[len(t)-1] != ']' {
		_, err := io.WriteString(w, "]\n")
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// ConvertFile converts the trace file at src to Chrome trace event JSON in
// dst (see Convert). dst may be src: the file is replaced, by a rename,
// once the JSON is written in full.
func ConvertFile(dst, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	if err := writeFileAtomic(dst, func(w io.Writer) error { return Convert(w, data) }); err != nil {
		return fmt.Errorf("trace: convert %s: %w", src, err)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file in its directory,
// renamed to path when fill and the writes succeed.
func writeFileAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(dirOf(path), ".dgen-trace-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 1<<16)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			if i == 0 {
				return "/"
			}
			return path[:i]
		}
	}
	return "."
}
