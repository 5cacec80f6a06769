// Package devprof writes profiles of what an rt context's devices did, in
// pprof's format (profile.proto, through github.com/google/pprof/profile),
// so that go tool pprof, Pyroscope and Parca read them: device time and
// commands by the Go line that enqueued them, and device memory allocated
// and in use by allocation site.
//
// A profile comes from a trace file that rt wrote (FromTrace; dgen trace
// pprof FILE > gpu.pb.gz on the command line), or from a window of a
// running service (Record, and Handler, which serves it over HTTP in the
// manner of net/http/pprof):
//
//	http.Handle("/debug/dgen/profile", devprof.Handler(ctx))
//
//	go tool pprof http://localhost:8080/debug/dgen/profile?seconds=30
//
// # What a profile holds
//
// Its sample types, in order:
//
//	commands/count           commands enqueued: kernel launches, transfers, fills, copies, markers
//	enqueue_time/nanoseconds the host time their enqueues took
//	device_time/nanoseconds  the device time of the commands that carry device times (the default)
//	timed_commands/count     the commands that carry device times
//	alloc_objects/count      allocations of device memory: new driver blocks and reuses of free blocks
//	alloc_space/bytes        their bytes (of the blocks)
//	inuse_space/bytes        device memory that a site holds at the end: in use, or free in its allocator's free list
//
// A command's sample has two frames: the command ("kernel NAME", "write
// NAME", ...) on top of the Go function, file and line that enqueued it
// (rt's trace records one frame per command: the user's call, not the
// whole stack). A memory sample has one, the allocation site's name
// ("untagged" for rt.Alloc's pool, "(no site)" for rt.NewBuffer and
// images). Every sample has the label device. go tool pprof -top shows
// device time by kernel and by Go caller; -sample_index=commands counts
// launches; -sample_index=inuse_space shows memory by site.
//
// # Device times
//
// rt measures device times only on a context whose queues profile: one
// opened with tracing configured and device-time sampling above 0
// (Config.Trace, DGEN_TRACE=perfetto:FILE,device=N, or Config.Tracer set
// to a trace.Tracer after SetDeviceSampling(N)). A service that wants
// device times in Handler's profiles opens its context so:
//
//	tr := trace.New() // no subscriber: every trace point is off
//	tr.SetDeviceSampling(16)
//	ctx, err := rt.OpenConfig(rt.Config{Tracer: tr})
//
// With no subscriber no command is sampled, so no launch makes an event;
// what the setting costs while no profile is recorded is the profiling
// queue's, which is nothing measurable on PoCL and on rt/cuda with N
// above 1, and slows launches on NVIDIA's OpenCL (docs/TRACING.md's table of
// DGEN_TRACE's costs). N=1 times every command, and on rt/cuda keeps
// CUPTI attached to the process while the context is open, which slows
// its launches all the time: a service wants N of 16 or more. With device=N,
// one command in N of each call site carries device times (its first
// included), and device_time sums those: timed_commands says how many,
// and commands/timed_commands scales it to an estimate of all of them.
// On a context opened otherwise the profile has commands and enqueue
// times and no device time, and says so in a comment. rt reads a queue's
// device times in batches (at its Finish, an Event's Wait, a traced
// transfer, and every 256 timed commands); a command whose times come
// after the window ends is counted without its device time.
//
// # Costs
//
// While no profile is recorded, devprof costs nothing: rt's trace points
// are one atomic load each with no subscriber (1.3–1.9 ns and no
// allocation, docs/BENCHMARKS.md), whatever the context's configuration. While one is
// recorded, every command of the context is traced: a task per command
// at its Go line (no allocation in the steady state; about 0.1–0.2 µs per
// command, docs/TRACING.md), an event and its profiling queries per timed
// command (on NVIDIA's OpenCL about a launch's worth; on rt/cuda a timed
// event pair, or CUPTI's records with N=1), and a map update under the
// recorder's lock per command and per memory event. docs/BENCHMARKS.md
// has the measured figures of tracing on the GPU, which are the
// profile's.
package devprof

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/dgen-go/dgen/rt/trace"
)

// The sample types of a profile, by index.
const (
	commands = iota
	enqueueTime
	deviceTime
	timedCommands
	allocObjects
	allocSpace
	inuseSpace
	numValues
)

var sampleTypes = [numValues]*profile.ValueType{
	commands:      {Type: "commands", Unit: "count"},
	enqueueTime:   {Type: "enqueue_time", Unit: "nanoseconds"},
	deviceTime:    {Type: "device_time", Unit: "nanoseconds"},
	timedCommands: {Type: "timed_commands", Unit: "count"},
	allocObjects:  {Type: "alloc_objects", Unit: "count"},
	allocSpace:    {Type: "alloc_space", Unit: "bytes"},
	inuseSpace:    {Type: "inuse_space", Unit: "bytes"},
}

// noSite names the memory of no allocation site: rt.NewBuffer's buffers
// and images, which the driver allocates directly.
const noSite = "(no site)"

// cmdKey identifies the commands of one sample: a node of the trace (a
// command kind and name at one Go line) on one device.
type cmdKey struct {
	node   uint64
	device string
}

// memKey identifies the memory of one sample: a site on one device.
type memKey struct {
	site, device string
}

// cmdSample is what a profile counts of the commands of one cmdKey.
type cmdSample struct {
	kind                    trace.CmdKind
	name, fn, file          string
	line                    int
	count, host, dev, timed int64
}

// memSample is what a profile counts of the memory of one memKey.
type memSample struct {
	allocs, bytes, inuse int64
}

// recorder is a trace subscriber that counts what a profile holds. It is
// safe for concurrent use: mu protects every field.
type recorder struct {
	mu          sync.Mutex
	cmds        map[cmdKey]*cmdSample
	mems        map[memKey]*memSample
	first, last int64 // the times of the first and last events, on the tracer's clock
}

func newRecorder() *recorder {
	return &recorder{cmds: map[cmdKey]*cmdSample{}, mems: map[memKey]*memSample{}}
}

// Wants implements trace.KindSubscriber.
func (r *recorder) Wants(k trace.Kind) bool {
	return k == trace.TaskEnd || k == trace.TaskComplete || k == trace.MemAlloc || k == trace.MemRelease
}

// HandleEvent implements trace.Subscriber.
func (r *recorder) HandleEvent(e trace.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == 0 || e.Time < r.first {
		r.first = e.Time
	}
	r.last = max(r.last, e.Time)
	switch e.Kind {
	case trace.TaskEnd, trace.TaskComplete:
		tk := &e.Task
		s := r.cmd(tk)
		if e.Kind == trace.TaskEnd {
			s.count++
			s.host += tk.HostEnd - tk.HostBegin
		} else {
			s.timed++
			s.dev += tk.DevEnd - tk.DevStart
		}
	case trace.MemAlloc, trace.MemRelease:
		s := r.mem(e.Mem.TagName, deviceName(e.Device))
		switch {
		case e.Kind == trace.MemAlloc:
			s.allocs++
			s.bytes += e.Mem.Size
			if !e.Mem.Pooled {
				s.inuse += e.Mem.Size
			}
		case !e.Mem.Pooled:
			s.inuse -= e.Mem.Size
		}
	}
}

// cmd returns the sample of tk's commands. r.mu is held.
func (r *recorder) cmd(tk *trace.Task) *cmdSample {
	var dev string
	if tk.Queue != nil {
		dev = deviceName(tk.Queue.Device)
	}
	k := cmdKey{tk.Node.ID, dev}
	s := r.cmds[k]
	if s == nil {
		n := tk.Node
		s = &cmdSample{kind: n.Kind, name: n.Name, fn: n.Func, file: n.File, line: n.Line}
		r.cmds[k] = s
	}
	return s
}

// mem returns the sample of a site's memory on a device. r.mu is held.
func (r *recorder) mem(site, device string) *memSample {
	if site == "" {
		site = noSite
	}
	k := memKey{site, device}
	s := r.mems[k]
	if s == nil {
		s = new(memSample)
		r.mems[k] = s
	}
	return s
}

func deviceName(d *trace.Device) string {
	if d == nil {
		return ""
	}
	return d.Name
}

// profile returns what r counted as a profile, with comments.
func (r *recorder) profile(comments ...string) *profile.Profile {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &profile.Profile{
		SampleType:        sampleTypes[:],
		DefaultSampleType: sampleTypes[deviceTime].Type,
		PeriodType:        sampleTypes[commands],
		Period:            1,
		Mapping:           []*profile.Mapping{{ID: 1, File: "dgen", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}},
		Comments:          comments,
	}
	b := builder{p: p, funcs: map[[2]string]*profile.Function{}, locs: map[locKey]*profile.Location{}}
	var count, timed int64
	for _, k := range sortedKeys(r.cmds, func(a, b cmdKey) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.device, b.device)) }) {
		s := r.cmds[k]
		count += s.count
		timed += s.timed
		v := make([]int64, numValues)
		v[commands], v[enqueueTime], v[deviceTime], v[timedCommands] = s.count, s.host, s.dev, s.timed
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{b.location(s.kind.String()+" "+s.name, "", 0), b.location(s.fn, s.file, s.line)},
			Value:    v,
			Label:    map[string][]string{"device": {k.device}},
		})
	}
	for _, k := range sortedKeys(r.mems, func(a, b memKey) int { return cmp.Or(cmp.Compare(a.site, b.site), cmp.Compare(a.device, b.device)) }) {
		s := r.mems[k]
		v := make([]int64, numValues)
		v[allocObjects], v[allocSpace], v[inuseSpace] = s.allocs, s.bytes, max(0, s.inuse)
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{b.location(k.site, "", 0)},
			Value:    v,
			Label:    map[string][]string{"device": {k.device}},
		})
	}
	if count > 0 && timed == 0 {
		p.Comments = append(p.Comments, "no device times: the context's queues do not profile (see rt/devprof's documentation, Device times)")
	}
	return p
}

// sortedKeys returns the keys of m in the order of compare, so that a
// profile is the same for the same events.
func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}

// locKey identifies a location: a function at a line.
type locKey struct {
	fn, file string
	line     int
}

// builder makes the functions and locations of a profile, once each.
type builder struct {
	p     *profile.Profile
	funcs map[[2]string]*profile.Function
	locs  map[locKey]*profile.Location
}

// location returns the location of fn at file:line, adding it to the
// profile on first use.
func (b *builder) location(fn, file string, line int) *profile.Location {
	k := locKey{fn, file, line}
	if l := b.locs[k]; l != nil {
		return l
	}
	f := b.funcs[[2]string{fn, file}]
	if f == nil {
		f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: fn, SystemName: fn, Filename: file}
		b.funcs[[2]string{fn, file}] = f
		b.p.Function = append(b.p.Function, f)
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: b.p.Mapping[0], Line: []profile.Line{{Function: f, Line: int64(line)}}}
	b.locs[k] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// FromTrace returns the profile of the trace in data: a trace file that
// rt's perfetto or flight subscriber wrote (DGEN_TRACE=perfetto:FILE), as
// records or as the JSON that its Close writes, as trace.Replay reads it.
// Its device time is the trace's: trace.ReadSummary's DeviceTotal, summed
// over the rows. A trace that started after its context allocated memory
// that it releases later counts less memory in use (never below 0).
func FromTrace(data []byte) (*profile.Profile, error) {
	r := newRecorder()
	dropped, err := trace.Replay(data, r)
	if err != nil {
		return nil, fmt.Errorf("devprof: %w", err)
	}
	var comments []string
	if dropped > 0 {
		comments = append(comments, fmt.Sprintf("the trace's writer dropped %d events, which the profile lacks", dropped))
	}
	p := r.profile(comments...)
	p.DurationNanos = r.last - r.first
	return p, nil
}
