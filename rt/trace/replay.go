package trace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Replay delivers the events of the trace in data to sub, in the file's
// order (time order), as a subscriber of the Tracer that wrote it would
// have received them, and returns the number of events that the file says
// its writer dropped, with the records it holds that cannot be read. data
// is a trace file as ReadSummary and Convert read it: a record file that
// the perfetto or flight subscriber wrote, whole or cut off by the end of
// its process, or the Chrome trace event JSON of a perfetto subscriber
// whose Tracer was closed. ReadSummary is Replay into a Summary; package
// rt/devprof replays a trace into a profile.
//
// A record file gives every kind of event but GraphCreate and NodeCreate.
// JSON gives the events of commands and memory only: TaskEnd and
// TaskComplete, whose tasks carry their node, host or device times, and a
// queue and device rebuilt from the file's track names, and MemAlloc and
// MemRelease. sub receives only the kinds it wants (KindSubscriber); it
// is called from the calling goroutine alone.
func Replay(data []byte, sub Subscriber) (dropped uint64, err error) {
	if sub == nil {
		return 0, errors.New("trace: replay: nil subscriber")
	}
	dropped, err = replay(data, sub)
	if err != nil {
		return dropped, fmt.Errorf("trace: replay: %w", err)
	}
	return dropped, nil
}

// replay is Replay, its errors without the prefix.
func replay(data []byte, sub Subscriber) (dropped uint64, err error) {
	if IsRecordFile(data) {
		l, err := readLog(data)
		if err != nil {
			return 0, fmt.Errorf("not a dgen trace file: %w", err)
		}
		missing := l.each(func(e *Event) {
			if wants(sub, e.Kind) {
				sub.HandleEvent(*e)
			}
		})
		return l.dropped + missing, nil
	}
	events, err := decodeEvents(data)
	if err != nil {
		return 0, fmt.Errorf("not a dgen trace file: %w", err)
	}
	return replayJSON(events, sub)
}

// jsonTracks rebuilds the devices, queues and nodes of a JSON trace file
// from its tracks' names and its slices' arguments, as the perfetto
// subscriber's writer (jsonWriter) lays them out.
type jsonTracks struct {
	procs   map[int]string    // process names by pid
	threads map[[2]int]string // thread names by (pid, tid)
	devices map[int]*Device   // by Seq
	queues  map[int]*Queue    // by Seq
	nodes   map[uint64]*Node  // by ID
}

// replayJSON is Replay for a JSON trace file.
func replayJSON(events []fileEvent, sub Subscriber) (dropped uint64, err error) {
	tr := &jsonTracks{procs: map[int]string{}, threads: map[[2]int]string{},
		devices: map[int]*Device{}, queues: map[int]*Queue{}, nodes: map[uint64]*Node{}}
	for i := range events {
		if e := &events[i]; e.Ph == "M" {
			if e.Tid == 0 && e.Name == "process_name" {
				tr.procs[e.Pid] = e.Args.Name
			} else if e.Name == "thread_name" {
				tr.threads[[2]int{e.Pid, e.Tid}] = e.Args.Name
			}
		}
	}
	for i := range events {
		e := &events[i]
		switch {
		case e.Cat == "dgen" && e.Args.Dropped > 0:
			dropped += e.Args.Dropped
		case e.Ph == "X" && (e.Cat == catHost || e.Cat == catDevice):
			ev, err := tr.task(e)
			if err != nil {
				return dropped, fmt.Errorf("event %d: %w", i, err)
			}
			if wants(sub, ev.Kind) {
				sub.HandleEvent(ev)
			}
		case e.Ph == "i" && e.Cat == catMem:
			ev := tr.mem(e)
			if wants(sub, ev.Kind) {
				sub.HandleEvent(ev)
			}
		}
	}
	return dropped, nil
}

// task rebuilds the TaskEnd (a host slice) or TaskComplete (a device
// slice) event of e.
func (tr *jsonTracks) task(e *fileEvent) (Event, error) {
	id, err := strconv.ParseUint(e.Args.Node, 16, 64)
	if err != nil {
		return Event{}, fmt.Errorf("bad node id %q", e.Args.Node)
	}
	n := tr.nodes[id]
	if n == nil {
		n = &Node{ID: id, Kind: parseCmdKind(e.Args.Kind), Name: e.Name, Func: e.Args.Func, File: e.Args.File, Line: e.Args.Line}
		tr.nodes[id] = n
	}
	q := tr.queue(e)
	begin := parseMicros(e.Ts)
	end := begin + parseMicros(e.Dur)
	tk := Task{ID: e.Args.Task, Node: n, Queue: q, Instance: e.Args.Instance}
	if e.Cat == catHost {
		tk.HostBegin, tk.HostEnd = begin, end
		return Event{Kind: TaskEnd, Time: end, Device: q.Device, Task: tk}, nil
	}
	tk.DevStart, tk.DevEnd = begin, end
	return Event{Kind: TaskComplete, Time: end, Device: q.Device, Task: tk}, nil
}

// queue returns the queue of the track of e, a slice of a queue's host or
// device track, making it on first sight. A queue's device is the device
// whose process holds its device track, or the one its host track names.
func (tr *jsonTracks) queue(e *fileEvent) *Queue {
	seq := (e.Tid - 1) % laneStride
	q := tr.queues[seq]
	if q == nil {
		q = &Queue{Seq: seq, ID: seq, InOrder: true}
		tr.queues[seq] = q
	}
	if e.Pid != hostPid && (q.Device == nil || q.Device.Seq != e.Pid-2) {
		q.Device = tr.device(e.Pid-2, "")
		q.Name = strings.TrimPrefix(tr.threads[[2]int{e.Pid, 1 + seq}], "queue ")
	}
	if q.Device == nil {
		// The host track is named "queue NAME (DEVICE)".
		name := strings.TrimPrefix(tr.threads[[2]int{hostPid, 1 + seq}], "queue ")
		dev := ""
		if i := strings.LastIndex(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
			name, dev = name[:i], name[i+2:len(name)-1]
		}
		q.Name = name
		q.Device = tr.deviceNamed(dev)
	}
	return q
}

// device returns the device of index seq in the trace, named by its
// device process ("device ID: NAME") or else by name.
func (tr *jsonTracks) device(seq int, name string) *Device {
	if d := tr.devices[seq]; d != nil {
		return d
	}
	d := &Device{ID: seq, Name: name, Seq: seq}
	if p, ok := tr.procs[2+seq]; ok {
		if idName, rest, ok := strings.Cut(strings.TrimPrefix(p, "device "), ": "); ok {
			if id, err := strconv.Atoi(idName); err == nil {
				d.ID, d.Name = id, rest
			}
		}
	}
	tr.devices[seq] = d
	return d
}

// deviceNamed returns the device called name, making one if the trace's
// device tracks name none.
func (tr *jsonTracks) deviceNamed(name string) *Device {
	for pid := range tr.procs {
		if pid < 2 {
			continue
		}
		if d := tr.device(pid-2, ""); d.Name == name {
			return d
		}
	}
	seq := -1 - len(tr.devices) // not a device of the device tracks
	d := &Device{ID: seq, Name: name, Seq: seq}
	tr.devices[seq] = d
	return d
}

// mem rebuilds the MemAlloc or MemRelease event of e, an instant on a
// device's memory track, named "alloc TAG" or "release TAG".
func (tr *jsonTracks) mem(e *fileEvent) Event {
	seq := e.Tid - memTidBase
	d := tr.devices[seq]
	if d == nil {
		d = tr.device(seq, strings.TrimPrefix(tr.threads[[2]int{hostPid, e.Tid}], "memory "))
	}
	op, tag, _ := strings.Cut(e.Name, " ")
	k := MemAlloc
	if op == "release" {
		k = MemRelease
	}
	return Event{Kind: k, Time: parseMicros(e.Ts), Device: d,
		Mem: Mem{Tag: e.Args.Tag, TagName: tag, Size: e.Args.Size, Pooled: e.Args.Pooled}}
}

// parseCmdKind returns the CmdKind named s (CmdKind.String), 0 if none.
func parseCmdKind(s string) CmdKind {
	for k, name := range cmdNames {
		if name == s && name != "" {
			return CmdKind(k)
		}
	}
	if n, ok := strings.CutPrefix(s, "cmd("); ok {
		if k, err := strconv.ParseUint(strings.TrimSuffix(n, ")"), 10, 8); err == nil {
			return CmdKind(k)
		}
	}
	return 0
}
