package trace

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestPerfettoStreamed checks that the perfetto file holds every event
// whose trace point returned, before Close and without waiting, in a form
// that Convert turns into JSON that loads.
func TestPerfettoStreamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	tr, err := Open("perfetto:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const iters = 5
	workload(tr, iters)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !IsRecordFile(data) {
		t.Fatalf("an open perfetto file is not a record file: %q", data[:min(len(data), 64)])
	}
	events, err := decodeEvents(data)
	if err != nil {
		t.Fatalf("unclosed trace file does not convert: %v", err)
	}
	host := 0
	for _, e := range events {
		if e.Ph == "X" && e.Cat == catHost {
			host++
		}
	}
	if host != 3*iters {
		t.Fatalf("%d host slices in the file, want %d", host, 3*iters)
	}
}

// TestSubscriberWriteErrors checks that Close returns the write errors of
// the built-in subscribers: /dev/full fails every write with ENOSPC.
func TestSubscriberWriteErrors(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, spec := range []string{"log:/dev/full", "perfetto:/dev/full", "flight:/dev/full", "summary:/dev/full"} {
		t.Run(spec, func(t *testing.T) {
			tr, err := Open(spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			workload(tr, 3)
			err = tr.Close()
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Close() = %v, want an error wrapping ENOSPC", err)
			}
			name, _, _ := strings.Cut(spec, ":")
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the %s subscriber", err, name)
			}
		})
	}
}

// TestRanges checks user ranges and marks: their events, and the perfetto
// slices that contain the commands enqueued within them.
func TestRanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	tr, err := Open("perfetto:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{}
	tr.Subscribe(rec)
	q := tr.Device(0, "gpu0").Queue(0, "q0", true)
	enqueue(q, Write, "before") // names the queue's track
	outer := tr.Range("solve")
	inner := tr.Range("step")
	enqueue(q, Kernel, "k")
	tr.Mark("converged")
	inner.End()
	outer.End()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.Events() {
		switch e.Kind {
		case UserRange:
			if e.Begin <= 0 || e.Time <= e.Begin {
				t.Errorf("range %s from %d to %d", e.Name, e.Begin, e.Time)
			}
			got = append(got, "range "+e.Name)
		case UserMark:
			got = append(got, "mark "+e.Name)
		}
	}
	if want := "mark converged,range step,range solve"; strings.Join(got, ",") != want {
		t.Errorf("user events %q, want %q", strings.Join(got, ","), want)
	}
	evs := readJSON(t, path)
	var k jsonEvent
	ranges := map[string]jsonEvent{}
	for _, e := range evs {
		switch {
		case e.Cat == catHost && e.Name == "k":
			k = e
		case e.Cat == catRange:
			ranges[e.Name] = e
		}
	}
	for _, name := range []string{"solve", "step"} {
		r, ok := ranges[name]
		if !ok || r.Ph != "X" {
			t.Fatalf("no range slice %s in %v", name, ranges)
		}
		if r.Tid != k.Tid || r.Pid != k.Pid || r.Ts > k.Ts || r.Ts+r.Dur < k.Ts+k.Dur {
			t.Errorf("range %s (pid %d tid %d, %v+%v) does not contain command k (pid %d tid %d, %v+%v)", name, r.Pid, r.Tid, r.Ts, r.Dur, k.Pid, k.Tid, k.Ts, k.Dur)
		}
	}
	if m, ok := ranges["converged"]; !ok || m.Ph != "i" || m.Tid != k.Tid {
		t.Errorf("mark converged: %+v, want an instant on the queue's track", m)
	}
	// Disabled: no subscriber, nothing emitted, nothing allocated.
	off := New()
	if n := testing.AllocsPerRun(100, func() { off.Range("r").End(); off.Mark("m") }); n != 0 {
		t.Errorf("disabled range and mark allocate %v times", n)
	}
}

// TestDeviceSampling checks which tasks are sampled for device times.
func TestDeviceSampling(t *testing.T) {
	tests := []struct {
		every int
		want  string // sampled instances of one node over 10 tasks
	}{
		{0, ""},
		{1, "1 2 3 4 5 6 7 8 9 10"},
		{4, "1 5 9"},
		{16, "1"},
		{-3, ""},
	}
	for _, tt := range tests {
		f := newFixture()
		f.t.SetDeviceSampling(tt.every)
		var got []string
		for range 10 {
			tk := enqueue(f.in, Kernel, "k")
			if tk.Sampled() {
				got = append(got, strconvU(tk.Instance))
			}
		}
		if s := strings.Join(got, " "); s != tt.want {
			t.Errorf("SetDeviceSampling(%d): sampled instances %q, want %q", tt.every, s, tt.want)
		}
	}
}

func strconvU(v uint64) string { return strconv.FormatUint(v, 10) }

func TestParseOptions(t *testing.T) {
	tests := []struct {
		spec      string
		subs      int
		every     int
		wantError string
	}{
		{"perfetto:/tmp/t.json", 1, 0, ""},
		{"perfetto:/tmp/t.json,device=16", 1, 16, ""},
		{"summary, device=all", 1, 1, ""},
		{"device=off,log", 1, 0, ""},
		{"summary,device=0", 1, 0, ""},
		{"device=16", 0, 0, "needs a subscriber"},
		{"summary,device=-1", 0, 0, "want a count"},
		{"summary,device=x", 0, 0, "want a count"},
		{"summary,device=", 0, 0, "want a count"},
		{"summary,device=1,device=2", 0, 0, "given twice"},
		{"summary,clock=mono", 1, 0, ""},
		{"summary,clock=tsc", 1, 0, ""},
		{"summary,clock=wall", 0, 0, "want mono or tsc"},
		{"summary,clock=mono,clock=tsc", 0, 0, "given twice"},
	}
	for _, tt := range tests {
		o, err := ParseOptions(tt.spec)
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) || !strings.Contains(err.Error(), EnvVar) {
				t.Errorf("ParseOptions(%q) error = %v, want one containing %q and %s", tt.spec, err, tt.wantError, EnvVar)
			}
			continue
		}
		if err != nil || len(o.Subscribers) != tt.subs || o.DeviceEvery != tt.every || o.Monotonic != strings.Contains(tt.spec, "clock=mono") {
			t.Errorf("ParseOptions(%q) = %+v, %v; want %d subscribers, device every %d", tt.spec, o, err, tt.subs, tt.every)
		}
		tr, err := Open(strings.ReplaceAll(tt.spec, "/tmp/t.json", filepath.Join(t.TempDir(), "t.json")), nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", tt.spec, err)
		}
		if tr.DeviceSampling() != tt.every {
			t.Errorf("Open(%q): sampling %d, want %d", tt.spec, tr.DeviceSampling(), tt.every)
		}
		tr.Close()
	}
}

// TestFrameWalk checks the frame-pointer walk against runtime.Callers: past
// the calling function's own frame, the same return addresses (no frame is
// inlined here), and a site cache that fills, so that Begin does not fall
// back to runtime.Callers on every command.
func TestFrameWalk(t *testing.T) {
	var key siteKey
	var want [4]uintptr
	n, m := walkBoth(&key, want[:])
	if n != 4 || m != 4 {
		t.Fatalf("walked %d frames, runtime.Callers %d; want 4 each", n, m)
	}
	if got := key[1:4]; [3]uintptr(got) != [3]uintptr(want[1:4]) {
		t.Errorf("frame walk %x, runtime.Callers %x", got, want[1:4])
	}
	// From a new goroutine the chain ends before 16 frames: the walk stops
	// at its top, with every frame it found, as runtime.Callers does.
	short := make(chan [2]int)
	go func() {
		var key siteKey
		var pcs [keyDepth]uintptr
		n, m := walkBoth(&key, pcs[:])
		short <- [2]int{n, m}
	}()
	if nm := <-short; nm[0] != nm[1] || nm[0] >= keyDepth {
		t.Errorf("from a new goroutine: walked %d frames, runtime.Callers %d; want the same, fewer than %d", nm[0], nm[1], keyDepth)
	}
	f := newFixture()
	for range 3 {
		enqueue(f.in, Kernel, "k")
	}
	if sites := len(*f.t.sites.Load()); sites != 1 {
		t.Errorf("site cache holds %d entries after 3 commands at one site, want 1", sites)
	}
}

// siteCaller begins a task on its queue with skip 1: the call site is the
// caller of Do, reached directly or through an interface, whose method
// wrapper is a frame that runtime.Callers does not count.
type siteCaller struct{ q *Queue }

//go:noinline
func (c siteCaller) Do() *Task { return c.q.Begin(Kernel, "k", 1) }

type doer interface{ Do() *Task }

// asDoer hides the dynamic type of d from the compiler, which would
// otherwise call its method directly.
//
//go:noinline
func asDoer(d doer) doer { return d }

// TestSiteDepth checks the call sites of tasks begun with one skip from
// chains of different depths, in turn, many times: a direct call, two calls
// through an interface (one wrapper frame more), and a deeper chain. Each
// task has its own line, however the depth of the walk for that skip
// changed on the way, and the site cache answers the repeated calls
// without runtime.Callers.
func TestSiteDepth(t *testing.T) {
	f := newFixture()
	c := siteCaller{f.in}
	i := asDoer(&c)
	type begun struct {
		tk   *Task
		line int
	}
	for n := range 50 {
		for _, b := range []begun{
			{c.Do(), line()},
			{i.Do(), line()},
			{i.Do(), line()},
			{nest1(func() *Task { return c.Do() }), line()},
		} {
			if b.tk.Node.Line != b.line {
				t.Fatalf("round %d: task of line %d recorded at line %d", n, b.line, b.tk.Node.Line)
			}
			b.tk.EndRelease()
		}
	}
	// Once known, a site costs no runtime.Callers, which would allocate.
	if n := testing.AllocsPerRun(10, func() { i.Do().EndRelease() }); n != 0 {
		t.Errorf("a Begin at a known site allocates %v times, want 0: the site cache missed", n)
	}
	if n := len(*f.t.sites.Load()); n > 8 {
		t.Errorf("the site map holds %d entries for 4 call sites, want at most 8 (one per site and walk depth)", n)
	}
}

// line returns the line of its call.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

//go:noinline
func nest1(f func() *Task) *Task { return f() }

// TestSiteTable checks the two levels of the site cache with keys made up
// to share a slot of the site table: each key finds its own node, in turn,
// as does each command name at one key, and the map behind the table
// answers for the keys that the table no longer holds, and puts them back.
func TestSiteTable(t *testing.T) {
	tr := New()
	tr.Subscribe(&Recorder{})
	pc := callerPC()
	var keys []siteKey
	slots := map[uint64]siteKey{}
	for i := uintptr(1); len(keys) == 0; i++ {
		var k siteKey
		k[0], k[1], k[2] = pc, pc+i, pc+2*i
		slot := k.hash(3) >> (64 - siteBits)
		if o, ok := slots[slot]; ok {
			keys = []siteKey{o, k}
		}
		slots[slot] = k
	}
	nodes := map[string]*Node{}
	for i, name := range []string{"a", "b", "c"} {
		k := &keys[min(i, 1)]
		nodes[name] = tr.newNode(k, 3, pc, Kernel, name)
	}
	if nodes["a"] == nodes["b"] || nodes["b"] == nodes["c"] {
		t.Fatalf("distinct names share a node: %v", nodes)
	}
	for range 3 {
		for i, name := range []string{"a", "b", "c"} {
			k := keys[min(i, 1)]
			if n := tr.lookupSite(&k, 3, Kernel, name); n != nodes[name] {
				t.Fatalf("lookup of %q at key %d: node %p, want %p", name, min(i, 1), n, nodes[name])
			}
			if s := tr.siteTab[k.hash(3)>>(64-siteBits)].Load(); s.node != nodes[name] {
				t.Fatalf("after a lookup of %q, the site table holds %q", name, s.node.Name)
			}
			if n := tr.lookupSite(&k, 3, Read, name); n != nil {
				t.Fatalf("lookup of a read %q at key %d found node %p of a kernel", name, min(i, 1), n)
			}
			if n := tr.lookupSite(&k, 2, Kernel, name); n != nil {
				t.Fatalf("lookup of %q at the first 2 frames of key %d found node %p", name, min(i, 1), n)
			}
		}
	}
}

//go:noinline
func walkBoth(key *siteKey, pcs []uintptr) (int, int) {
	return walkNested(key, pcs)
}

//go:noinline
func walkNested(key *siteKey, pcs []uintptr) (int, int) {
	n := fpCallers(key, len(pcs))
	return n, runtime.Callers(1, pcs)
}

// kindRecorder is a Recorder that wants some kinds only.
type kindRecorder struct {
	Recorder
	kinds []Kind
}

func (r *kindRecorder) Wants(k Kind) bool { return slices.Contains(r.kinds, k) }

// TestKindSubscriber checks that a KindSubscriber receives the kinds it
// wants and no other, beside a subscriber that wants everything.
func TestKindSubscriber(t *testing.T) {
	f := newFixture()
	kr := &kindRecorder{kinds: []Kind{TaskEnd, UserMark}}
	f.t.Subscribe(kr)
	a := enqueue(f.in, Write, "w")
	enqueue(f.in, Kernel, "k", a)
	f.t.Mark("m")
	f.dev.MemAlloc(Mem{Size: 4})
	var got []string
	for _, e := range kr.Events() {
		got = append(got, e.Kind.String())
	}
	if want := "task_end task_end mark"; strings.Join(got, " ") != want {
		t.Errorf("kind subscriber got %q, want %q", strings.Join(got, " "), want)
	}
	all := map[Kind]bool{}
	for _, e := range f.rec.Events() {
		all[e.Kind] = true
	}
	for _, k := range []Kind{GraphCreate, NodeCreate, TaskBegin, EdgeCreate, TaskEnd, UserMark, MemAlloc} {
		if !all[k] {
			t.Errorf("the subscriber of everything got no %v", k)
		}
	}
}
