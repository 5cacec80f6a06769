package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// enqueue stands for the runtime's enqueue function: Begin with skip 1
// records the line that called enqueue.
func enqueue(q *Queue, kind CmdKind, name string, deps ...*Task) *Task {
	tk := q.Begin(kind, name, 1)
	for _, d := range deps {
		tk.DependsOn(d)
	}
	tk.End()
	return tk
}

type fixture struct {
	t   *Tracer
	rec *Recorder
	dev *Device
	in  *Queue // in-order
	ooo *Queue // out-of-order
}

func newFixture() *fixture {
	f := &fixture{t: New(), rec: &Recorder{}}
	f.t.Subscribe(f.rec)
	f.dev = f.t.Device(0, "gpu0")
	f.in = f.dev.Queue(0, "q0", true)
	f.ooo = f.dev.Queue(1, "q1", false)
	return f
}

// brief describes an event compactly for comparisons.
func brief(e Event) string {
	switch e.Kind {
	case GraphCreate:
		return "graph_create"
	case NodeCreate:
		return "node_create " + e.Node.Name
	case TaskBegin, TaskEnd, TaskComplete:
		return fmt.Sprintf("%s %s#%d", e.Kind, e.Task.Node.Name, e.Task.Instance)
	case EdgeCreate:
		s := fmt.Sprintf("edge %s#%d->%s#%d", e.From.Node.Name, e.From.Instance, e.Task.Node.Name, e.Task.Instance)
		if e.Implicit {
			s += " implicit"
		}
		return s
	case MemAlloc, MemRelease:
		return fmt.Sprintf("%s %s %d pooled=%v", e.Kind, e.Mem.TagName, e.Mem.Size, e.Mem.Pooled)
	case CacheEvent:
		return fmt.Sprintf("cache %s %s", e.Cache.Op, e.Cache.Program)
	}
	return e.Kind.String()
}

func briefs(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = brief(e)
	}
	return out
}

func TestEventOrder(t *testing.T) {
	f := newFixture()
	f.dev.CacheEvent(Cache{Op: Build, Program: "hotspot", Duration: 1000})
	f.dev.MemAlloc(Mem{Tag: 7, TagName: "temp", Size: 4096})
	w := enqueue(f.in, Write, "write")
	k := enqueue(f.in, Kernel, "step", w)
	k.Complete(100, 200)
	enqueue(f.in, Read, "read")
	f.dev.MemRelease(Mem{Tag: 7, TagName: "temp", Size: 4096, Pooled: true})
	f.dev.MemAlloc(Mem{Tag: 7, TagName: "temp", Size: 4096, Pooled: true})
	f.dev.CacheEvent(Cache{Op: MemoryHit, Program: "hotspot"})

	want := []string{
		"graph_create",
		"cache build hotspot",
		"mem_alloc temp 4096 pooled=false",
		"node_create write",
		"task_begin write#1",
		"task_end write#1",
		"node_create step",
		"task_begin step#1",
		"edge write#1->step#1 implicit",
		"edge write#1->step#1",
		"task_end step#1",
		"task_complete step#1",
		"node_create read",
		"task_begin read#1",
		"edge step#1->read#1 implicit",
		"task_end read#1",
		"mem_release temp 4096 pooled=true",
		"mem_alloc temp 4096 pooled=true",
		"cache memory_hit hotspot",
	}
	got := briefs(f.rec.Events())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Times never go backwards within a task, and every task has a
	// positive host duration.
	for _, e := range f.rec.Events() {
		if e.Kind == TaskEnd && e.Task.HostEnd <= e.Task.HostBegin {
			t.Errorf("%s: host end %d <= begin %d", brief(e), e.Task.HostEnd, e.Task.HostBegin)
		}
	}
}

func TestNodeCreateOncePerSite(t *testing.T) {
	tests := []struct {
		name   string
		loops  int
		queues int
	}{
		{"one", 1, 1},
		{"loop", 10, 1},
		{"two queues", 25, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			qs := []*Queue{f.ooo, f.in}[:tt.queues]
			for i := 0; i < tt.loops; i++ {
				for _, q := range qs {
					enqueue(q, Kernel, "k") // site A
					enqueue(q, Kernel, "k") // site B: same name, another line
				}
			}
			var nodes []*Node
			begins := map[*Node][]uint64{}
			for _, e := range f.rec.Events() {
				switch e.Kind {
				case NodeCreate:
					nodes = append(nodes, e.Node)
				case TaskBegin:
					begins[e.Task.Node] = append(begins[e.Task.Node], e.Task.Instance)
				}
			}
			if len(nodes) != 2 {
				t.Fatalf("got %d node_create events, want 2 (one per call site)", len(nodes))
			}
			a, b := nodes[0], nodes[1]
			if a.ID == b.ID || a.Line == b.Line || b.Line != a.Line+1 {
				t.Errorf("nodes not distinct per line: %+v %+v", a, b)
			}
			for _, n := range nodes {
				if !strings.HasSuffix(n.File, "trace_test.go") || !strings.HasSuffix(n.Func, "TestNodeCreateOncePerSite.func1") {
					t.Errorf("node location = %s %s:%d, want this test", n.Func, n.File, n.Line)
				}
				if n.ID != NodeID(n.Name, n.Func, n.File, n.Line) {
					t.Errorf("node id %x not derived from its location", n.ID)
				}
				want := uint64(tt.loops * tt.queues)
				if n.Instances() != want {
					t.Errorf("node line %d: %d instances, want %d", n.Line, n.Instances(), want)
				}
				inst := begins[n]
				for i, v := range inst {
					if v != uint64(i+1) {
						t.Fatalf("instances of line %d = %v, want 1..%d", n.Line, inst, want)
					}
				}
			}
		})
	}
}

func TestNodeIDStable(t *testing.T) {
	// The id depends on the location only: fixed inputs, fixed output.
	a := NodeID("hotspot_step", "main.run", "/src/main.go", 42)
	if a != NodeID("hotspot_step", "main.run", "/src/main.go", 42) {
		t.Fatal("NodeID not deterministic")
	}
	for _, other := range []uint64{
		NodeID("hotspot_step", "main.run", "/src/main.go", 43),
		NodeID("hotspot_step2", "main.run", "/src/main.go", 42),
		NodeID("hotspot_step", "main.run2", "/src/main.go", 42),
		NodeID("hotspot_step", "main.run", "/src/main2.go", 42),
	} {
		if other == a {
			t.Errorf("NodeID collision for a different location")
		}
	}
	// Pinned: the id must not change between releases, or traces of
	// different runs could not be compared.
	if a != 0x86987158b72c163e {
		t.Errorf("NodeID = %#x, want the pinned 0x86987158b72c163e", a)
	}
}

func TestEdges(t *testing.T) {
	type cmd struct {
		name    string
		inOrder bool
		deps    []string
	}
	tests := []struct {
		name string
		cmds []cmd
		want []string // "from->to", implicit edges suffixed with " i"
	}{
		{
			name: "out of order wait lists",
			cmds: []cmd{{"a", false, nil}, {"b", false, nil}, {"c", false, []string{"a", "b"}}, {"d", false, []string{"c"}}},
			want: []string{"a->c", "b->c", "c->d"},
		},
		{
			name: "in order implicit",
			cmds: []cmd{{"a", true, nil}, {"b", true, nil}, {"c", true, nil}},
			want: []string{"a->b i", "b->c i"},
		},
		{
			name: "mixed",
			cmds: []cmd{{"a", true, nil}, {"x", false, nil}, {"b", true, []string{"x"}}, {"y", false, []string{"a", "b"}}},
			want: []string{"a->b i", "x->b", "a->y", "b->y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			tasks := map[string]*Task{}
			for _, c := range tt.cmds {
				q := f.ooo
				if c.inOrder {
					q = f.in
				}
				var deps []*Task
				for _, d := range c.deps {
					deps = append(deps, tasks[d])
				}
				tasks[c.name] = enqueue(q, Kernel, c.name, deps...)
			}
			var got []string
			for _, e := range f.rec.Events() {
				if e.Kind != EdgeCreate {
					continue
				}
				s := e.From.Node.Name + "->" + e.Task.Node.Name
				if e.Implicit {
					s += " i"
				}
				if e.From.ID != tasks[e.From.Node.Name].ID || e.Task.ID != tasks[e.Task.Node.Name].ID {
					t.Errorf("edge %s: task ids %d->%d do not match", s, e.From.ID, e.Task.ID)
				}
				got = append(got, s)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("edges = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDisabled(t *testing.T) {
	tr := New()
	q := tr.Device(0, "d").Queue(0, "q", true)
	tk := q.Begin(Kernel, "k", 0)
	tk.DependsOn(nil)
	tk.DependsOn(&Task{})
	tk.End()
	tk.Complete(1, 2)
	if tk != nil {
		t.Errorf("disabled Begin returned %+v, want nil", tk)
	}
	if tr.Enabled() || len(tr.Nodes()) != 0 {
		t.Errorf("disabled tracer recorded nodes")
	}
	// Subscribing later replays the graph; unsubscribing disables again.
	rec := &Recorder{}
	unsub := tr.Subscribe(rec)
	enqueue(q, Kernel, "k")
	rec2 := &Recorder{}
	tr.Subscribe(rec2, StreamTask)
	if got := briefs(rec2.Events()); !reflect.DeepEqual(got, []string{"graph_create", "node_create k"}) {
		t.Errorf("late subscriber got %q, want graph and node replay", got)
	}
	unsub()
	n := len(rec.Events())
	enqueue(q, Kernel, "k")
	if len(rec.Events()) != n {
		t.Errorf("unsubscribed subscriber still receives events")
	}
	if len(rec2.Events()) == 2 {
		t.Errorf("remaining subscriber lost events")
	}
	// Stream filtering: a mem-only subscriber sees no task events.
	memRec := &Recorder{}
	tr.Subscribe(memRec, StreamMem)
	enqueue(q, Kernel, "k")
	tr.Device(0, "").MemAlloc(Mem{Size: 8})
	if got := briefs(memRec.Events()); !reflect.DeepEqual(got, []string{"mem_alloc  8 pooled=false"}) {
		t.Errorf("mem subscriber got %q", got)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if tr.Enabled() {
		t.Errorf("closed tracer still enabled")
	}
}

// TestReleaseReuses checks the life of a task: a released task is what
// the queue's next Begin returns, started afresh (no end or device times of
// its earlier life); a copy taken before Release keeps the old values; a
// task that is kept, not released, is never handed out again; and a
// traced begin, end and release allocates nothing.
func TestReleaseReuses(t *testing.T) {
	f := newFixture()
	a := enqueue(f.ooo, Kernel, "k")
	a.Complete(100, 200)
	old := *a
	a.Release()
	b := f.ooo.Begin(Kernel, "k", 0)
	if b != a {
		t.Fatalf("Begin after Release returned %p, want the released task %p", b, a)
	}
	if b.ID == old.ID || b.HostEnd != 0 || b.DevStart != 0 || b.DevEnd != 0 {
		t.Errorf("reused task = %+v, want a fresh task after %+v", *b, old)
	}
	if old.HostEnd == 0 || old.DevEnd == 0 {
		t.Errorf("copy of the released task lost its times: %+v", old)
	}
	b.End() // kept, not released
	c := enqueue(f.ooo, Kernel, "k")
	if c == b {
		t.Errorf("Begin returned a task that was not released")
	}
	c.Release()
	(&Task{}).Release() // the zero Task: nothing to hand back
	if n := testing.AllocsPerRun(100, func() {
		tk := f.ooo.Begin(Kernel, "k", 0)
		tk.End()
		tk.Release()
	}); n != 0 {
		t.Errorf("a traced begin, end and release allocates %v times, want 0", n)
	}
}

// TestEndRelease checks EndRelease: it ends the task as End does (its
// TaskEnd event, with the end time, on an in-order queue with the implicit
// edge before it) and hands it back as Release does (the queue's next Begin
// returns it), without allocating; on nil and the zero Task it does
// nothing.
func TestEndRelease(t *testing.T) {
	f := newFixture()
	var last *Task
	for i := range 2 {
		tk := f.in.Begin(Kernel, "k", 0)
		if i == 1 && tk != last {
			t.Fatalf("Begin after EndRelease returned %p, want the released task %p", tk, last)
		}
		tk.EndRelease()
		last = tk
	}
	var ends []Task
	for _, e := range f.rec.Events() {
		if e.Kind == TaskEnd {
			ends = append(ends, e.Task)
		}
	}
	if len(ends) != 2 || ends[0].Instance != 1 || ends[1].Instance != 2 {
		t.Fatalf("TaskEnd events %+v, want instances 1 and 2", ends)
	}
	for _, e := range ends {
		if e.HostEnd <= e.HostBegin {
			t.Errorf("task %d ended at %d, not after its begin at %d", e.ID, e.HostEnd, e.HostBegin)
		}
	}
	want := []string{"task_begin k#1", "task_end k#1", "task_begin k#2", "edge k#1->k#2 implicit", "task_end k#2"}
	var got []string
	for _, e := range f.rec.Events() {
		if e.Kind != GraphCreate && e.Kind != NodeCreate {
			got = append(got, brief(e))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	(*Task)(nil).EndRelease()
	(&Task{}).EndRelease()
	if n := testing.AllocsPerRun(100, func() { f.ooo.Begin(Kernel, "k", 0).EndRelease() }); n != 0 {
		t.Errorf("a traced begin and EndRelease allocates %v times, want 0", n)
	}
}

// TestQueueFollowsSubscribers checks that the queues and devices, which
// keep their own copy of their stream's subscribers, follow Subscribe, its
// cancellation and Close, whether they were created before or after.
func TestQueueFollowsSubscribers(t *testing.T) {
	tr := New()
	d := tr.Device(0, "d")
	before := d.Queue(0, "before", true)
	if tk := before.Begin(Kernel, "k", 0); tk != nil || d.MemTraced() {
		t.Fatalf("a Tracer without subscribers traces: Begin %p, MemTraced %v", tk, d.MemTraced())
	}
	unsub := tr.Subscribe(&Recorder{})
	after := d.Queue(1, "after", true)
	d2 := tr.Device(1, "d2")
	for _, q := range []*Queue{before, after, d2.Queue(0, "q", false)} {
		tk := q.Begin(Kernel, "k", 0)
		if tk == nil {
			t.Errorf("queue %s: Begin returned nil with a subscriber", q)
		}
		tk.EndRelease()
	}
	if !d.MemTraced() || !d2.MemTraced() {
		t.Errorf("MemTraced with a subscriber: %v, %v", d.MemTraced(), d2.MemTraced())
	}
	unsub()
	if tk := after.Begin(Kernel, "k", 0); tk != nil || d.MemTraced() {
		t.Errorf("after unsubscribing: Begin %p, MemTraced %v", tk, d.MemTraced())
	}
	tr.Subscribe(&Recorder{}, StreamMem)
	if tk := before.Begin(Kernel, "k", 0); tk != nil || !d2.MemTraced() {
		t.Errorf("with a memory subscriber only: Begin %p, MemTraced %v", tk, d2.MemTraced())
	}
	tr.Subscribe(&Recorder{})
	tr.Close()
	if tk := before.Begin(Kernel, "k", 0); tk != nil || d.MemTraced() {
		t.Errorf("after Close: Begin %p, MemTraced %v", tk, d.MemTraced())
	}
}

// TestSubscribeWhileTracing changes the subscribers while goroutines
// create queues and devices and begin tasks on them, for the race
// detector: a queue or device copies the view that it reads at creation
// and at every change.
func TestSubscribeWhileTracing(t *testing.T) {
	tr := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := tr.Device(g, "d")
			for i := range 200 {
				q := d.Queue(i, "q", i%2 == 0)
				q.Begin(Kernel, "k", 0).EndRelease()
				d.MemAlloc(Mem{Size: 4})
			}
		}()
	}
	for range 50 {
		unsub := tr.Subscribe(&Recorder{})
		unsub()
	}
	wg.Wait()
	tr.Close()
}

func TestCustomStream(t *testing.T) {
	tr := New()
	s := tr.Stream("user.phase")
	if s.Enabled() {
		t.Fatal("stream without subscriber enabled")
	}
	rec := &Recorder{}
	tr.Subscribe(rec, "user.phase")
	s.Emit(Event{Kind: CacheEvent})
	evs := rec.Events()
	if len(evs) != 1 || evs[0].Stream != s || evs[0].Time == 0 {
		t.Fatalf("custom stream events = %+v", evs)
	}
}

func TestClockAlignment(t *testing.T) {
	tests := []struct {
		name    string
		samples [][2]int64 // host, device
		dev     int64
		want    int64
	}{
		{"none", nil, 500, 500},
		{"offset", [][2]int64{{1000, 5_000_000}}, 5_000_100, 1100},
		{"close samples keep offset", [][2]int64{{1000, 5_000_000}, {2000, 5_001_010}}, 5_001_110, 2100},
		{"drift", [][2]int64{{0, 0}, {1_001_000_000, 1_000_000_000}}, 2_000_000_000, 2_002_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New().Device(0, "d")
			for _, s := range tt.samples {
				d.SyncClock(s[0], s[1])
			}
			if got := d.ToHost(tt.dev); got != tt.want {
				t.Errorf("ToHost(%d) = %d, want %d", tt.dev, got, tt.want)
			}
		})
	}
	// Complete stores aligned times.
	f := newFixture()
	f.dev.SyncClock(10_000, 1_000_000)
	tk := enqueue(f.ooo, Kernel, "k")
	tk.Complete(1_000_500, 1_000_500) // zero length becomes 1 ns
	if tk.DevStart != 10_500 || tk.DevEnd != 10_501 {
		t.Errorf("aligned device times = %d..%d, want 10500..10501", tk.DevStart, tk.DevEnd)
	}
}

func TestParseBuiltins(t *testing.T) {
	tests := []struct {
		spec    string
		want    []Builtin
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"summary", []Builtin{{Name: "summary"}}, ""},
		{"perfetto:/tmp/x.json, summary ,log", []Builtin{{Name: "perfetto", Path: "/tmp/x.json"}, {Name: "summary"}, {Name: "log"}}, ""},
		{"log:/tmp/l.txt", []Builtin{{Name: "log", Path: "/tmp/l.txt"}}, ""},
		{"perfetto", nil, "needs a file"},
		{"flight:/tmp/f.bin", []Builtin{{Name: "flight", Path: "/tmp/f.bin"}}, ""},
		{"flight:/tmp/f.bin,size=1M", []Builtin{{Name: "flight", Path: "/tmp/f.bin", Size: 1 << 20}}, ""},
		{"size=2G, flight:/tmp/f.bin", []Builtin{{Name: "flight", Path: "/tmp/f.bin", Size: 2 << 30}}, ""},
		{"flight:/tmp/f.bin,size=64MiB", []Builtin{{Name: "flight", Path: "/tmp/f.bin", Size: 64 << 20}}, ""},
		{"flight", nil, "needs a file"},
		{"flight:/tmp/f.bin,size=lots", nil, "want a byte count"},
		{"flight:/tmp/f.bin,size=-1M", nil, "want a byte count"},
		{"flight:/tmp/f.bin,size=1K", nil, "want a byte count"},
		{"flight:/tmp/f.bin,size=", nil, "want a byte count"},
		{"flight:/tmp/f.bin,size=99999999999999999999", nil, "want a byte count"},
		{"flight:/tmp/f.bin,size=1M,size=2M", nil, "given twice"},
		{"perfetto:/tmp/x.json,size=1M", nil, "needs flight:PATH"},
		{"perfetto:", nil, "needs a file"},
		{"summary,,log", nil, "item 2 is empty"},
		{"summary,", nil, "item 2 is empty"},
		{"chrome:/tmp/x", nil, `unknown subscriber "chrome"`},
		{"1", nil, `unknown subscriber "1"`},
		{"summary:", nil, "empty path"},
		{"summary,summary", nil, "given twice"},
		{"perfetto:a.json,log:a.json", nil, "write the same file"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			o, err := ParseOptions(tt.spec)
			got := o.Subscribers
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "DGEN_TRACE") {
					t.Fatalf("ParseOptions(%q) error = %v, want one containing %q and DGEN_TRACE", tt.spec, err, tt.wantErr)
				}
				if _, err := Open(tt.spec, nil); err == nil {
					t.Fatalf("Open(%q) succeeded", tt.spec)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseOptions(%q) = %v, %v; want %v", tt.spec, got, err, tt.want)
			}
		})
	}
	if _, err := Open("perfetto:"+filepath.Join(t.TempDir(), "no", "such", "dir.json"), nil); err == nil {
		t.Error("Open with an uncreatable file succeeded")
	}
}

// workload runs a known sequence on two devices: allocation, a cache build,
// kernels depending on writes across queues, reads, device completions.
func workload(tr *Tracer, iters int) {
	d0 := tr.Device(0, "gpu0")
	d1 := tr.Device(1, "cpu \"pocl\"")
	d0.SyncClock(tr.Now(), 1_000_000_000)
	d1.SyncClock(tr.Now(), 0)
	q0 := d0.Queue(0, "main", true)
	q1 := d1.Queue(0, "aux", false)
	d0.CacheEvent(Cache{Op: Build, Program: "hotspot", Duration: 5000})
	d0.CacheEvent(Cache{Op: MemoryHit, Program: "hotspot"})
	var prev *Task
	devNow := int64(1_000_000_000)
	for i := 0; i < iters; i++ {
		d0.MemAlloc(Mem{Tag: 1, TagName: "temp", Size: 1 << 20, Pooled: i > 0})
		w := enqueue(q1, Write, "write")
		w.Complete(int64(i)*10_000, int64(i)*10_000+3000)
		k := enqueue(q0, Kernel, "hotspot_step", w, prev)
		k.Complete(devNow, devNow+7000)
		devNow += 10_000
		r := enqueue(q0, Read, "read")
		r.Complete(devNow, devNow+1000)
		devNow += 2000
		d0.MemRelease(Mem{Tag: 1, TagName: "temp", Size: 1 << 20, Pooled: true})
		prev = k
	}
	d0.MemRelease(Mem{Tag: 1, TagName: "temp", Size: 1 << 20})
}

type jsonEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	ID   uint64          `json:"id"`
	Bp   string          `json:"bp"`
	Args json.RawMessage `json:"args"`
}

func readJSON(t *testing.T, path string) []jsonEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A closed file is a whole JSON array.
	var events []jsonEvent
	if err := json.Unmarshal(data, &events); err != nil {
		t.Fatalf("trace file does not parse: %v", err)
	}
	return events
}

// checkPerfetto checks the structural properties of a written trace.
func checkPerfetto(t *testing.T, evs []jsonEvent, wantHost, wantDevice int) {
	t.Helper()
	type track struct{ pid, tid int }
	slices := map[track][]jsonEvent{}
	names := map[track]string{}
	flows := map[uint64][]jsonEvent{}
	var host, device int
	for _, e := range evs {
		switch e.Ph {
		case "X":
			if e.Dur <= 0 {
				t.Errorf("slice %s has duration %v", e.Name, e.Dur)
			}
			slices[track{e.Pid, e.Tid}] = append(slices[track{e.Pid, e.Tid}], e)
			switch e.Cat {
			case "host":
				host++
			case "device":
				device++
			}
		case "M":
			var a struct{ Name string }
			if err := json.Unmarshal(e.Args, &a); err != nil || a.Name == "" {
				t.Errorf("metadata %s without a name: %s", e.Name, e.Args)
			}
			if e.Name == "process_name" {
				names[track{e.Pid, -1}] = a.Name
			} else {
				names[track{e.Pid, e.Tid}] = a.Name
			}
		case "s", "f":
			flows[e.ID] = append(flows[e.ID], e)
		}
	}
	if host != wantHost || device != wantDevice {
		t.Errorf("got %d host and %d device slices, want %d and %d", host, device, wantHost, wantDevice)
	}
	for tr, ss := range slices {
		if names[tr] == "" || names[track{tr.pid, -1}] == "" {
			t.Errorf("track pid %d tid %d has slices but no thread or process name", tr.pid, tr.tid)
		}
		// Slices on one track nest properly (no partial overlap).
		sort.Slice(ss, func(i, j int) bool { return ss[i].Ts < ss[j].Ts })
		for i := 1; i < len(ss); i++ {
			a, b := ss[i-1], ss[i]
			if b.Ts < a.Ts+a.Dur && b.Ts+b.Dur > a.Ts+a.Dur+1e-9 {
				t.Errorf("slices %s and %s overlap on pid %d tid %d", a.Name, b.Name, tr.pid, tr.tid)
			}
		}
	}
	enclosed := func(e jsonEvent) bool {
		for _, s := range slices[track{e.Pid, e.Tid}] {
			if e.Ts > s.Ts && e.Ts < s.Ts+s.Dur {
				return true
			}
		}
		return false
	}
	if len(flows) == 0 {
		t.Error("no flow events")
	}
	for id, fl := range flows {
		if len(fl) != 2 || fl[0].Ph != "s" || fl[1].Ph != "f" || fl[1].Bp != "e" {
			t.Errorf("flow %d: events %+v, want one s and one f with bp e", id, fl)
			continue
		}
		for _, e := range fl {
			if !enclosed(e) {
				t.Errorf("flow %d %s at pid %d tid %d ts %v is not inside a slice", id, e.Ph, e.Pid, e.Tid, e.Ts)
			}
		}
	}
}

func TestPerfettoAndSummary(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.json")
	sum := filepath.Join(dir, "summary.txt")
	logf := filepath.Join(dir, "log.txt")
	tr, err := Open("perfetto:"+trace+",summary:"+sum+",log:"+logf, nil)
	if err != nil {
		t.Fatal(err)
	}
	const iters = 20
	workload(tr, iters)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	evs := readJSON(t, trace)
	checkPerfetto(t, evs, 3*iters, 3*iters)
	var depFlows, launchFlows int
	for _, e := range evs {
		if e.Ph == "s" {
			switch e.Cat {
			case "dep":
				depFlows++
			case "launch":
				launchFlows++
			}
		}
	}
	// Edges: write->kernel each iteration, kernel->kernel from the second
	// (explicit), and in-order kernel->read plus read->next kernel.
	wantDeps := iters + (iters - 1) + iters + (iters - 1)
	if depFlows != wantDeps || launchFlows != 3*iters {
		t.Errorf("got %d dep and %d launch flows, want %d and %d", depFlows, launchFlows, wantDeps, 3*iters)
	}

	inMem, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile bytes.Buffer
	if err := SummarizeFile(trace, &fromFile); err != nil {
		t.Fatal(err)
	}
	if string(inMem) != fromFile.String() {
		t.Errorf("summary from file differs from summary in memory:\n%s\nvs\n%s", fromFile.String(), inMem)
	}
	if n := strings.Count(string(inMem), "\n"); n != 4 {
		t.Errorf("summary has %d lines, want header and 3 rows:\n%s", n, inMem)
	}
	for _, want := range []string{"hotspot_step", "trace_test.go", fmt.Sprint(iters)} {
		if !strings.Contains(string(inMem), want) {
			t.Errorf("summary lacks %q:\n%s", want, inMem)
		}
	}
	logData, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logData), "task_begin"); n != 3*iters {
		t.Errorf("log has %d task_begin lines, want %d", n, 3*iters)
	}
	if err := SummarizeFile(logf, &fromFile); err == nil {
		t.Error("SummarizeFile accepted a log file")
	}
}

func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.json")
	var sumOut bytes.Buffer
	tr, err := Open("perfetto:"+trace+",summary", &sumOut)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{}
	tr.Subscribe(rec)
	const goroutines, per = 16, 50
	dev := tr.Device(0, "gpu")
	shared := dev.Queue(100, "shared", false)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := dev.Queue(g, fmt.Sprint("q", g), true)
			var prev *Task
			for i := 0; i < per; i++ {
				a := enqueue(own, Kernel, "k")
				b := enqueue(shared, Copy, "copy", a, prev)
				b.Complete(int64(i*100), int64(i*100+50))
				dev.MemAlloc(Mem{Size: 16})
				prev = b
			}
		}()
	}
	wg.Wait()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	counts := map[Kind]int{}
	for _, e := range rec.Events() {
		counts[e.Kind]++
	}
	want := map[Kind]int{
		GraphCreate:  1,
		NodeCreate:   2,
		TaskBegin:    2 * goroutines * per,
		TaskEnd:      2 * goroutines * per,
		TaskComplete: goroutines * per,
		EdgeCreate:   goroutines*(per-1) + goroutines*per + goroutines*(per-1),
		MemAlloc:     goroutines * per,
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("counts = %v, want %v", counts, want)
	}
	for _, n := range tr.Nodes() {
		if n.Instances() != goroutines*per {
			t.Errorf("node %s: %d instances, want %d", n.Name, n.Instances(), goroutines*per)
		}
	}
	checkPerfetto(t, readJSON(t, trace), 2*goroutines*per, goroutines*per)
	var fromFile bytes.Buffer
	if err := SummarizeFile(trace, &fromFile); err != nil {
		t.Fatal(err)
	}
	if sumOut.String() != fromFile.String() {
		t.Errorf("summary from file differs:\n%s\nvs\n%s", fromFile.String(), sumOut.String())
	}
}

func TestJSONString(t *testing.T) {
	for _, s := range []string{"plain", `q"uote\`, "ctl\x01\n\t", "ünï", "bad\xffutf8"} {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("%q: %s does not parse: %v", s, b, err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); got != want {
			t.Errorf("%q round trips to %q", s, got)
		}
	}
}

// TestClock checks that the Tracer's clock (the time-stamp counter where
// it is constant) keeps time with the monotonic clock.
func TestClock(t *testing.T) {
	tr, err := Open("summary", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	w0, c0 := time.Now(), tr.Now()
	time.Sleep(50 * time.Millisecond)
	w, c := time.Since(w0), time.Duration(tr.Now()-c0)
	if diff := c - w; diff < -w/50-time.Millisecond || diff > w/50+time.Millisecond {
		t.Errorf("the Tracer's clock measured %v over %v of the monotonic clock", c, w)
	}
	if a, b := tr.Now(), tr.Now(); b < a {
		t.Errorf("the clock went back from %d to %d", a, b)
	}
}
