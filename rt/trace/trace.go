// Package trace records the task graph of a dgen runtime context: which Go
// source line enqueued which command, when the host enqueued it, when the
// device ran it, what it depended on, and the memory and cache events around
// it. It is the dgen counterpart of SYCL's XPTI instrumentation.
//
// A Tracer belongs to one runtime context. It delivers events on named
// streams (StreamTask, StreamMem, StreamCache, or any other name) to
// subscribers: values implementing Subscriber, registered by Go code with
// Tracer.Subscribe or selected by a spec string (the DGEN_TRACE environment
// variable) passed to Open. The built-in subscribers write a trace file that
// ui.perfetto.dev opens (perfetto:PATH), keep the newest events in a flight
// recorder (flight:PATH), print a summary table per source location, or log
// every event.
//
// The perfetto and flight subscribers survive the process: the traced
// goroutine writes each event as a 64-byte record into a shared mapping of
// the file before its trace point returns, so the kernel has every event of
// a call that returned however the process ends (os.Exit, log.Fatal, a
// panic in any goroutine, SIGKILL). Close converts a perfetto file to
// Chrome trace event JSON; Convert (dgen trace json) converts the record
// file that a process left without closing its Tracer.
//
// What others do to a trace file cannot crash the process. A file
// truncated while the program runs (logrotate's copytruncate, : > PATH),
// renamed away (rotation) or removed is noticed within a second, or at the
// first store that faults: the Tracer warns once (OpenConfig.Logger) and
// starts the file again at its path, with the nodes defined so far, and
// with the same promise; the records of the store that faulted are dropped
// and counted, and a renamed file keeps the records written before. Every
// file a spec names is locked (a lock file .NAME.dgen-lock beside it)
// before it is written: a second Tracer on the same path, in this process
// or another, is refused with an error wrapping ErrBusy, or left out with
// one warning under OpenConfig.SkipBusy, as the runtime opens contexts.
//
// A trace point whose stream has no subscriber costs one atomic load and
// allocates nothing. With subscribers, a steady-state task (a call site seen
// before) allocates nothing either: the call site is found by walking a few
// frame pointers and looking the return addresses up in a cache, so
// runtime.Callers and symbolisation run only on a new site; events are
// value structs passed to subscribers, built only for the kinds that some
// subscriber wants (KindSubscriber).
//
// Device times are optional (Tracer.SetDeviceSampling, DGEN_TRACE's
// device=N): the task graph is complete without them, and the runtime
// profiles only the commands of sampled tasks (Task.Sampled). Go code marks
// its own ranges and instants with Tracer.Range and Tracer.Mark.
//
// The runtime uses the package as follows at every enqueue:
//
//	tk := q.tq.Begin(trace.Kernel, name, 1) // q.tq is the queue's *trace.Queue
//	for _, w := range waitList {
//		tk.DependsOn(w.task) // the *trace.Task kept with each rt event
//	}
//	ev, err := backend.Enqueue(...) // with an event only if tk.Sampled()
//	tk.End()
//	ev.task = tk // kept: never released
//	// later, when a sampled command completes with profiling information:
//	ev.task.Complete(start, end) // device clock, nanoseconds
//
// Begin returns nil when the task stream has no subscriber, and every
// method of Task does nothing on nil. A command that keeps no event hands
// its task back to the Tracer's pool with Release once it is done with it,
// so that a traced command allocates nothing; one that needs the task for
// nothing after its end calls EndRelease instead of End and Release, and a
// disabled trace point is then one atomic load and one test:
//
//	tk := q.tq.Begin(trace.Kernel, name, 1)
//	err := backend.Submit(...) // no event
//	tk.EndRelease()
package trace

import (
	"errors"
	"fmt"
	"io"
	stdslog "log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// EnvVar is the environment variable holding the subscriber spec that the
// runtime passes to Open.
const EnvVar = "DGEN_TRACE"

// ErrBusy is wrapped by the error of a trace file that another tracer
// writes: another context of this process, or another process, opened
// with the same path. The first keeps the file; the second is refused
// before it touches it.
var ErrBusy = errors.New("in use by another tracer")

// The names of the built-in streams.
const (
	// StreamTask carries GraphCreate, NodeCreate, TaskBegin, TaskEnd,
	// TaskComplete and EdgeCreate events.
	StreamTask = "dgen.task"
	// StreamMem carries MemAlloc and MemRelease events.
	StreamMem = "dgen.mem"
	// StreamCache carries CacheEvent events.
	StreamCache = "dgen.cache"
)

// Subscriber receives trace events. HandleEvent is called synchronously
// at the trace point, possibly from many goroutines at once, so it must be
// safe for concurrent use and should be quick. It must not call methods of
// the Tracer that delivered the event, and must not retain pointers into the
// event beyond the pointed-to objects themselves (Node, Queue, Device and
// Stream values live as long as the Tracer).
type Subscriber interface {
	HandleEvent(e Event)
}

// A KindSubscriber is a Subscriber that receives only the kinds of events
// for which Wants reports true. The Tracer asks when the subscriber joins
// and does not build the events of kinds that no subscriber wants (the
// perfetto and summary subscribers, for example, draw a task from its
// TaskEnd and want no TaskBegin). Wants must not change its answers.
type KindSubscriber interface {
	Subscriber
	Wants(k Kind) bool
}

// Stream is a named channel of events. Its trace points are enabled exactly
// when it has at least one subscriber.
type Stream struct {
	name string
	t    *Tracer
	view atomic.Pointer[view] // the subscribers; nil when there is none
}

// view is the subscribers of a stream as its trace points read them: a
// snapshot that publishLocked replaces whole, never changed once
// published, so that a trace point finds every list it needs behind one
// atomic load.
//
// Its first fields are what the trace points of commands and memory events
// read, in one cache line.
type view struct {
	files  []*recFile             // the record files, which store the kinds recWants reports
	events uint32                 // bit k set when kinds[k] is not empty
	subs   []Subscriber           // every subscriber of the stream, at least one
	kinds  [numKinds][]Subscriber // those that want each kind, but record files
}

// wanting returns the subscribers of v that want events of kind k, or nil.
func (v *view) wanting(k Kind) []Subscriber {
	if int(k) >= numKinds {
		return v.subs
	}
	return v.kinds[k]
}

// wants reports whether a subscriber that takes Events wants kind k.
func (v *view) wants(k Kind) bool { return v.events&(1<<k) != 0 }

// records returns the record files of v that store events of kind k.
func (v *view) records(k Kind) []*recFile {
	if int(k) < numKinds && recWants(k) {
		return v.files
	}
	return nil
}

// recSubscriber is a built-in subscriber that writes a record file: trace
// points write its records directly, without building an Event. It wants
// the kinds that recWants reports.
type recSubscriber interface {
	recFile() *recFile
}

// records returns the record files of s that want events of kind k, or
// nil.
func (s *Stream) records(k Kind) []*recFile {
	if v := s.view.Load(); v != nil {
		return v.records(k)
	}
	return nil
}

// wanting returns the subscribers of s that want events of kind k, or nil.
func (s *Stream) wanting(k Kind) []Subscriber {
	if v := s.view.Load(); v != nil {
		return v.wanting(k)
	}
	return nil
}

// wants reports whether sub wants events of kind k.
func wants(sub Subscriber, k Kind) bool {
	ks, ok := sub.(KindSubscriber)
	return !ok || int(k) >= numKinds || ks.Wants(k)
}

// Name returns the stream's name.
func (s *Stream) Name() string { return s.name }

// Enabled reports whether s has a subscriber. It costs one atomic load.
func (s *Stream) Enabled() bool { return s != nil && s.view.Load() != nil }

// Emit delivers e to the subscribers of s, setting e.Stream to s and, when
// it is zero, e.Time to the current time. It lets packages beyond the
// runtime publish their own events on their own streams.
func (s *Stream) Emit(e Event) {
	if s == nil {
		return
	}
	v := s.view.Load()
	if v == nil {
		return
	}
	subs := v.wanting(e.Kind)
	var recs []*recFile
	if int(e.Kind) < numKinds {
		recs = v.records(e.Kind)
	}
	if subs == nil && recs == nil {
		return
	}
	e.Stream = s
	if e.Time == 0 {
		e.Time = s.t.Now()
	}
	for _, r := range recs {
		r.handle(&e)
	}
	deliver(subs, &e)
}

func deliver(subs []Subscriber, e *Event) {
	for _, sub := range subs {
		sub.HandleEvent(*e)
	}
}

type subscription struct {
	id      int
	sub     Subscriber
	streams []string // nil means every stream
}

func (s *subscription) wants(name string) bool {
	if s.streams == nil {
		return true
	}
	for _, n := range s.streams {
		if n == name {
			return true
		}
	}
	return false
}

// Tracer records the events of one runtime context. Create it with New or
// Open; its methods are safe for concurrent use.
type Tracer struct {
	// What a traced command reads and writes comes first, together.
	tsc0     uint64                           // the time-stamp counter at start, 0 for the monotonic clock
	perTick  float64                          // nanoseconds per tick of the time-stamp counter
	siteTab  *[siteSlots]atomic.Pointer[site] // the sites last used, by the top bits of their hash
	nextTask atomic.Uint64
	walk     [keyDepth]atomic.Int32 // by Begin's skip: the frames its site keys hold, 0 until known (see shorten)

	start            time.Time
	graph            uint64
	task, mem, cache *Stream
	queueSeq         atomic.Uint64
	sites            atomic.Pointer[map[uint64][]site] // by siteKey.hash
	every            atomic.Int32                      // device-time sampling: see SetDeviceSampling
	drops            atomic.Uint64                     // events the built-in file writers dropped
	tasks            sync.Pool                         // released tasks beyond the queues' spares

	mu       sync.Mutex // guards everything below
	streams  map[string]*Stream
	subs     []subscription
	nextSub  int
	nodes    map[uint64]*Node // by ID
	nodeList []*Node          // in creation order
	devices  []*Device
	owned    []io.Closer // built-in subscribers opened by Open
	locks    []*pathLock // the paths of Open's summary and log files
	flight   *FlightRecorder
	closed   bool
	log      *stdslog.Logger // warnings of the built-in subscribers; nil for slog.Default()
}

// New returns a Tracer with no subscriber: every trace point is disabled
// until Subscribe is called.
func New() *Tracer {
	t := &Tracer{
		streams: make(map[string]*Stream),
		nodes:   make(map[uint64]*Node),
	}
	t.start = time.Now()
	t.graph = uint64(t.start.UnixNano())
	t.task = t.streamLocked(StreamTask)
	t.mem = t.streamLocked(StreamMem)
	t.cache = t.streamLocked(StreamCache)
	empty := map[uint64][]site{}
	t.sites.Store(&empty)
	t.siteTab = new([siteSlots]atomic.Pointer[site])
	return t
}

// Open returns a Tracer with the built-in subscribers and the device-time
// sampling selected by spec (see ParseOptions); an empty spec gives a Tracer
// with none. Subscribers that print
// (summary and log without a path) write to stderr. Files named in spec are
// created now, so that a bad path is reported when the context opens. Open
// is OpenWith with Stderr set and the default logger.
func Open(spec string, stderr io.Writer) (*Tracer, error) {
	return OpenWith(spec, OpenConfig{Stderr: stderr})
}

// OpenConfig holds what OpenWith needs beside the spec.
type OpenConfig struct {
	// Stderr is what the summary and log subscribers without a path
	// print to; nil discards it.
	Stderr io.Writer
	// Logger receives the Tracer's warnings: a trace file truncated,
	// moved away or removed while the program runs, a subscriber left out
	// (SkipBusy). Nil means slog.Default().
	Logger *stdslog.Logger
	// SkipBusy leaves out, with one warning, a subscriber whose file
	// another tracer writes (another context of this process or another
	// process: an error wrapping ErrBusy), where OpenWith would otherwise
	// fail. The runtime sets it: a second context or process started with
	// the same DGEN_TRACE opens without that file.
	SkipBusy bool
}

// OpenWith is Open with the settings of cfg. Every file that spec names
// is locked before it is written (see ErrBusy).
func OpenWith(spec string, cfg OpenConfig) (*Tracer, error) {
	o, err := ParseOptions(spec)
	if err != nil {
		return nil, err
	}
	t := New()
	t.log = cfg.Logger
	if t.log == nil {
		t.log = stdslog.Default()
	}
	if len(o.Subscribers) > 0 && !o.Monotonic {
		t.useTSC()
	}
	t.SetDeviceSampling(o.DeviceEvery)
	opened := 0
	for _, sp := range o.Subscribers {
		sub, err := sp.open(cfg.Stderr, t)
		if err != nil && cfg.SkipBusy && errors.Is(err, ErrBusy) {
			t.log.Warn("dgen: trace file left out: another tracer writes it; give each context and process a path of its own", "item", sp.String(), "err", err)
			continue
		}
		if err != nil {
			t.Close()
			return nil, err
		}
		opened++
		t.owned = append(t.owned, sub)
		if fr, ok := sub.(*FlightRecorder); ok {
			t.flight = fr
			fr.handleSignals()
		}
		t.Subscribe(sub)
	}
	if opened == 0 {
		t.SetDeviceSampling(0) // every subscriber left out: nothing to profile for
	}
	return t, nil
}

// FlightRecorder returns the flight recorder that Open's spec selected
// (flight:PATH), or nil. Dumping the newest events to PATH while the
// program runs is one line:
//
//	ctx.Tracer().FlightRecorder().Dump()
func (t *Tracer) FlightRecorder() *FlightRecorder {
	if t == nil {
		return nil
	}
	return t.flight
}

// Dropped returns the number of events that the built-in file writers
// opened by Open could not store (a full disk, or a file past 64 GiB). They
// are counted in the trace file and in the summary too.
func (t *Tracer) Dropped() uint64 {
	if t == nil {
		return 0
	}
	return t.drops.Load()
}

// useTSC switches a Tracer that has not been used yet to the time-stamp
// counter, where it runs at a constant rate (see clock.go). Open does it
// for the Tracers that DGEN_TRACE selects, so that a program that does not
// trace spends nothing on the counter's calibration.
func (t *Tracer) useTSC() {
	if tsc0, perTick := clockStart(); tsc0 != 0 {
		t.tsc0, t.perTick = tsc0, perTick
		t.start = time.Now()
		t.graph = uint64(t.start.UnixNano())
	}
}

// Now returns the current host time on the Tracer's clock: monotonic
// nanoseconds since the Tracer was created, read from the CPU's
// time-stamp counter where it runs at a constant rate for the Tracers that
// Open gives subscribers (see clock.go), else from the monotonic clock.
// Clock samples given to Device.SyncClock use this clock.
func (t *Tracer) Now() int64 {
	if t.tsc0 != 0 {
		// A signed conversion is one instruction; the counter's span since
		// the Tracer's start stays far below 1<<63.
		return int64(float64(int64(rdtsc()-t.tsc0)) * t.perTick)
	}
	return int64(time.Since(t.start))
}

// SetDeviceSampling sets which commands report device times, through
// Task.Sampled: none when n is 0 (the default), else the first instance of
// every node and one in n after it; 1 asks for every command. A runtime
// context reads the setting when it opens: its queues profile only when it
// is above 0, and then only sampled commands carry an event and profiling
// queries. The host-side task graph (nodes, tasks with host times, edges,
// memory and cache events) needs neither, so 0 costs the least. Negative
// values count as 0.
func (t *Tracer) SetDeviceSampling(n int) { t.every.Store(int32(max(0, min(n, math.MaxInt32)))) }

// DeviceSampling returns the setting of SetDeviceSampling.
func (t *Tracer) DeviceSampling() int { return int(t.every.Load()) }

// Start returns the wall-clock time at which the Tracer's clock reads 0.
func (t *Tracer) Start() time.Time { return t.start }

// Enabled reports whether any built-in stream has a subscriber.
func (t *Tracer) Enabled() bool {
	return t != nil && (t.task.Enabled() || t.mem.Enabled() || t.cache.Enabled())
}

// Stream returns the stream called name, creating it if needed.
// Subscribers registered for every stream receive its events too.
func (t *Tracer) Stream(name string) *Stream {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.streamLocked(name)
}

func (t *Tracer) streamLocked(name string) *Stream {
	if s, ok := t.streams[name]; ok {
		return s
	}
	s := &Stream{name: name, t: t}
	t.streams[name] = s
	t.publishLocked(s)
	return s
}

// publishLocked recomputes the subscribers of s, and passes the views of
// the task and memory streams on to the queues and devices that keep a
// copy.
func (t *Tracer) publishLocked(s *Stream) {
	var v *view
	for i := range t.subs {
		if !t.closed && t.subs[i].wants(s.name) {
			if v == nil {
				v = new(view)
			}
			v.subs = append(v.subs, t.subs[i].sub)
		}
	}
	if v != nil {
		v.sort()
	}
	s.view.Store(v)
	switch {
	case s == t.task:
		for _, d := range t.devices {
			d.mu.Lock()
			for _, q := range d.queues {
				q.view.Store(v)
			}
			d.mu.Unlock()
		}
	case s == t.mem:
		for _, d := range t.devices {
			d.memView.Store(v)
		}
	}
}

// sort fills v's record files and lists by kind from its subscribers.
func (v *view) sort() {
	for _, sub := range v.subs {
		if rs, ok := sub.(recSubscriber); ok {
			v.files = append(v.files, rs.recFile())
			continue
		}
		for k := range v.kinds {
			if wants(sub, Kind(k)) {
				v.kinds[k] = append(v.kinds[k], sub)
				v.events |= 1 << k
			}
		}
	}
}

// Subscribe registers sub for the named streams, or for every stream
// (present and future) when none is named. A subscriber of StreamTask first
// receives GraphCreate and a NodeCreate for every node created so far, so
// that it sees the whole graph whenever it joins. The returned function
// cancels the subscription. Subscribing to a closed Tracer does nothing.
func (t *Tracer) Subscribe(sub Subscriber, streams ...string) (unsubscribe func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || sub == nil {
		return func() {}
	}
	if rs, ok := sub.(recSubscriber); ok {
		rs.recFile().attach(t)
	}
	s := subscription{id: t.nextSub, sub: sub}
	t.nextSub++
	if len(streams) > 0 {
		s.streams = append([]string(nil), streams...)
	}
	if s.wants(StreamTask) {
		if wants(sub, GraphCreate) {
			sub.HandleEvent(Event{Kind: GraphCreate, Stream: t.task, Time: t.Now(), Graph: t.graph})
		}
		for _, n := range t.nodeList {
			if wants(sub, NodeCreate) {
				sub.HandleEvent(Event{Kind: NodeCreate, Stream: t.task, Time: t.Now(), Node: n})
			}
		}
	}
	t.subs = append(t.subs, s)
	for _, name := range streams {
		t.streamLocked(name)
	}
	for _, st := range t.streams {
		t.publishLocked(st)
	}
	id := s.id
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		for i := range t.subs {
			if t.subs[i].id == id {
				t.subs = append(t.subs[:i], t.subs[i+1:]...)
				break
			}
		}
		for _, st := range t.streams {
			t.publishLocked(st)
		}
	}
}

// Close disables every trace point and closes the built-in subscribers
// opened by Open (writing the Perfetto file's end and printing the summary).
// Subscribers registered with Subscribe are not closed. Close returns the
// errors of the built-in subscribers; calling it again does nothing.
func (t *Tracer) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	for _, st := range t.streams {
		t.publishLocked(st)
	}
	owned := t.owned
	t.owned = nil
	t.mu.Unlock()
	var errs []error
	for _, c := range owned {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	t.mu.Lock()
	locks := t.locks
	t.locks = nil
	t.mu.Unlock()
	for _, l := range locks {
		l.release()
	}
	return errors.Join(errs...)
}

// Nodes returns the nodes created so far, sorted by ID.
func (t *Tracer) Nodes() []*Node {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]*Node(nil), t.nodeList...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Device returns the trace handle of the device with the given small id,
// creating it with name on first use. The runtime keeps it with its device.
func (t *Tracer) Device(id int, name string) *Device {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range t.devices {
		if d.ID == id {
			return d
		}
	}
	d := &Device{ID: id, Name: name, Seq: len(t.devices), t: t}
	d.memView.Store(t.mem.view.Load())
	t.devices = append(t.devices, d)
	return d
}

// Device is the trace handle of one device. Its host clock alignment is set
// with SyncClock.
type Device struct {
	// ID and Name are the runtime's identifiers of the device.
	ID   int
	Name string
	// Seq is the device's index in its Tracer, from 0.
	Seq int

	t       *Tracer
	memView atomic.Pointer[view]   // t.mem's view, kept by Tracer.publishLocked: one load less per memory event
	defIn   atomic.Pointer[recGen] // the first record file that defined the device: its records need no look in that file's set
	clock   atomic.Pointer[clockFit]
	mu      sync.Mutex // guards queues and samples, and orders the copies of t.task's view into queues
	queues  []*Queue
	first   clockSample
	nsamp   int
}

type clockSample struct{ host, dev int64 }

// clockFit maps device time to host time: host = h0 + (dev-d0)*rate.
type clockFit struct {
	h0, d0 int64
	rate   float64
}

func (c *clockFit) toHost(dev int64) int64 {
	if c.rate == 1 {
		return c.h0 + (dev - c.d0)
	}
	return c.h0 + int64(math.Round(float64(dev-c.d0)*c.rate))
}

// minDriftSpan is the smallest device time span over which SyncClock
// estimates clock drift rather than a plain offset.
const minDriftSpan = int64(10 * time.Millisecond)

// SyncClock records a sample of the device clock: dev (device nanoseconds,
// the clock of OpenCL profiling) read at host time host (Tracer.Now). With
// one sample, device times are shifted by the offset host-dev; with more, the
// first and latest samples also correct a rate difference, once they are at
// least 10 ms apart. The runtime supplies a sample per device when it opens
// the device (for example: host time after a marker completes, and the
// marker's profiling end time) and may refresh it at any time.
func (d *Device) SyncClock(host, dev int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nsamp++
	if d.nsamp == 1 {
		d.first = clockSample{host, dev}
		d.clock.Store(&clockFit{h0: host, d0: dev, rate: 1})
		return
	}
	span := dev - d.first.dev
	if span < minDriftSpan {
		d.clock.Store(&clockFit{h0: host, d0: dev, rate: 1})
		return
	}
	rate := float64(host-d.first.host) / float64(span)
	if rate <= 0.5 || rate >= 2 { // not a clock: fall back to the offset
		d.clock.Store(&clockFit{h0: host, d0: dev, rate: 1})
		return
	}
	d.clock.Store(&clockFit{h0: d.first.host, d0: d.first.dev, rate: rate})
}

// ToHost converts a device time to the host clock. Without a clock sample
// it returns dev unchanged.
func (d *Device) ToHost(dev int64) int64 {
	c := d.clock.Load()
	if c == nil {
		return dev
	}
	return c.toHost(dev)
}

// Queue returns the trace handle of the device's queue with the given small
// id, creating it with name on first use. On an in-order queue each command
// depends implicitly on the previous one, and Begin emits that edge.
func (d *Device) Queue(id int, name string, inOrder bool) *Queue {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.queues {
		if q.ID == id {
			return q
		}
	}
	q := &Queue{ID: id, Name: name, InOrder: inOrder, Device: d, t: d.t, task: d.t.task}
	// Under d.mu: a publishLocked that stored the task stream's view
	// before this load updates q too if it takes d.mu after.
	q.view.Store(d.t.task.view.Load())
	q.Seq = int(d.t.nextQueue())
	d.queues = append(d.queues, q)
	return q
}

// Queue is the trace handle of one command queue. Its Begin method is the
// trace point of every enqueued command.
type Queue struct {
	// What a traced command reads and writes comes first, together.
	view   atomic.Pointer[view] // t.task's view, kept by Tracer.publishLocked: Begin's one load
	t      *Tracer
	spare  atomic.Pointer[Task]   // the last task released, for the next Begin
	lastID atomic.Uint64          // the id of the last task begun (in-order queues)
	defIn  atomic.Pointer[recGen] // the first record file that defined the queue: its records need no look in that file's set

	// InOrder is set for in-order queues.
	InOrder bool
	// Seq is the queue's index in its Tracer, from 0.
	Seq int
	// ID and Name are the runtime's identifiers of the queue.
	ID     int
	Name   string
	Device *Device

	task *Stream    // t.task
	mu   sync.Mutex // guards last
	last Task       // the last task begun, kept while a subscriber wants edges as Events
}

func (t *Tracer) nextQueue() uint64 { return t.queueSeq.Add(1) - 1 }

// String returns a short description of the queue for logs.
func (q *Queue) String() string {
	if q == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s/%s", q.Device.Name, q.Name)
}
