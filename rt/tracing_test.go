package rt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

// testDevice returns the device selector of the tests: DGEN_DEVICE, or the
// CPU (PoCL).
func testDevice() string {
	if sel := os.Getenv("DGEN_DEVICE"); sel != "" {
		return sel
	}
	return "cpu"
}

// addOneSetup returns the default queue of ctx, a buffer of 64 elements and
// add_one bound to it.
func addOneSetup(t testing.TB, ctx *rt.Context) (*rt.Queue, rt.Buffer[int32], *raw.Kernel) {
	t.Helper()
	buf, err := rt.NewBuffer[int32](ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	return ctx.Queue(), buf, addOne(t, ctx, buf)
}

// writeThenAdd enqueues a write of buf and a launch of k over it.
func writeThenAdd(t testing.TB, q *rt.Queue, buf rt.Buffer[int32], k *raw.Kernel) {
	t.Helper()
	if err := buf.Write(q, make([]int32, buf.Len())); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(buf.Len())); err != nil {
		t.Fatal(err)
	}
}

// openTraced opens a context on the test device reporting to a fresh
// tracer with a Recorder subscribed to every stream, and device times for
// every command.
func openTraced(t testing.TB) (*rt.Context, *trace.Recorder) {
	t.Helper()
	tr := trace.New()
	tr.SetDeviceSampling(1)
	rec := &trace.Recorder{}
	tr.Subscribe(rec)
	sel := testDevice()
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: sel, Tracer: tr}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("open traced context on %q: %v", sel, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ctx, rec
}

const addOneSrc = `__kernel void add_one(__global int *p) { p[get_global_id(0)] += 1; }`

func addOne(t testing.TB, ctx *rt.Context, buf rt.Buffer[int32]) *raw.Kernel {
	t.Helper()
	prog, err := raw.Build(ctx, "add_one", addOneSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("add_one")
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.SetBuffer(k, 0, buf); err != nil {
		t.Fatal(err)
	}
	return k
}

// taskLine describes a task-stream event for comparisons.
func taskLine(e trace.Event) string {
	switch e.Kind {
	case trace.NodeCreate:
		return e.Kind.String() + " " + e.Node.Name
	case trace.EdgeCreate:
		kind := "explicit"
		if e.Implicit {
			kind = "implicit"
		}
		return fmt.Sprintf("%s %s %s->%s", e.Kind, kind, e.From.Node.Name, e.Task.Node.Name)
	case trace.TaskBegin, trace.TaskEnd, trace.TaskComplete:
		return e.Kind.String() + " " + e.Task.Node.Name
	}
	return e.Kind.String()
}

func TestTraceSequence(t *testing.T) {
	ctx, rec := openTraced(t)
	q := ctx.Queue()
	buf, err := rt.NewBuffer[int32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	k := addOne(t, ctx, buf)
	rec.Reset()

	if err := buf.Write(q, make([]int32, 16)); err != nil {
		t.Fatal(err)
	}
	fill, err := buf.FillEvent(q, 41)
	if err != nil {
		t.Fatal(err)
	}
	launch, err := raw.Launch(q, k, rt.Range1(16), fill)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]int32, 16)
	if err := buf.Read(q, dst, launch); err != nil {
		t.Fatal(err)
	}
	if dst[3] != 42 {
		t.Fatalf("dst[3] = %d, want 42", dst[3])
	}
	var got []string
	for _, e := range rec.Events() {
		if e.Stream.Name() == trace.StreamTask {
			got = append(got, taskLine(e))
		}
	}
	want := []string{
		"node_create write buffer", "task_begin write buffer", "task_end write buffer", "task_complete write buffer",
		"node_create fill buffer", "task_begin fill buffer", "edge_create implicit write buffer->fill buffer", "task_end fill buffer",
		"node_create add_one", "task_begin add_one", "edge_create implicit fill buffer->add_one", "edge_create explicit fill buffer->add_one", "task_end add_one",
		"node_create read buffer", "task_begin read buffer", "edge_create implicit add_one->read buffer", "edge_create explicit add_one->read buffer", "task_end read buffer",
		"task_complete fill buffer", "task_complete add_one", "task_complete read buffer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range rec.Events() {
		if e.Kind != trace.TaskComplete {
			continue
		}
		tk := e.Task
		if tk.DevEnd <= tk.DevStart || tk.HostEnd <= tk.HostBegin {
			t.Errorf("%s: host [%d, %d] device [%d, %d]: want positive durations", tk.Node.Name, tk.HostBegin, tk.HostEnd, tk.DevStart, tk.DevEnd)
		}
		// The device cannot start a command before the host began to
		// enqueue it, up to the clock alignment's error.
		slack := int64(cx(ctx).Devices()[0].ClockError()) + 1000
		if tk.DevStart+slack < tk.HostBegin {
			t.Errorf("%s: device start %d before host begin %d (clock error %v)", tk.Node.Name, tk.DevStart, tk.HostBegin, cx(ctx).Devices()[0].ClockError())
		}
	}
	if cx(ctx).Devices()[0].ClockError() <= 0 {
		t.Errorf("ClockError = %v, want a positive bound", cx(ctx).Devices()[0].ClockError())
	}
}

func TestTraceMemAndCache(t *testing.T) {
	ctx, rec := openTraced(t)
	buf, err := rt.NewBuffer[int32](ctx, 256)
	if err != nil {
		t.Fatal(err)
	}
	addOne(t, ctx, buf)
	if err := buf.Free(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.Events() {
		switch e.Kind {
		case trace.MemAlloc, trace.MemRelease:
			got = append(got, fmt.Sprintf("%s %d pooled=%v", e.Kind, e.Mem.Size, e.Mem.Pooled))
		case trace.CacheEvent:
			got = append(got, fmt.Sprintf("%s %s %s", e.Kind, e.Cache.Op, e.Cache.Program))
			if e.Cache.Duration <= 0 {
				t.Errorf("build duration %d, want > 0", e.Cache.Duration)
			}
		}
	}
	// Another test may have put add_one in the persistent cache already.
	want := "mem_alloc 1024 pooled=false\ncache build add_one\nmem_release 1024 pooled=false"
	if g := strings.Join(got, "\n"); strings.Contains(g, "disk_hit add_one") {
		want = strings.Replace(want, "build", "disk_hit", 1)
	}
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("events:\n%s\nwant:\n%s", g, want)
	}
}

// TestTraceCallSites checks that every command records the user's line,
// whichever entry point it goes through, and that a call site makes one
// node whose instances count its visits.
func TestTraceCallSites(t *testing.T) {
	ctx, rec := openTraced(t)
	q := ctx.Queue()
	buf, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	k := addOne(t, ctx, buf)
	dst := make([]int32, 4)
	c, cancel := context.WithCancel(context.Background()) // a Context form's wait, never cancelled
	defer cancel()
	// Each command is called on the line of its table entry: line() is
	// that line, and the node must record it exactly.
	tests := []struct {
		name string
		kind trace.CmdKind
		line int
		do   func() error
	}{
		{"Launch", trace.Kernel, line(), func() error { _, err := raw.Launch(q, k, rt.Range1(4)); return err }},
		{"LaunchSkip", trace.Kernel, line(), func() error { return launchWrapper(q, k) }},
		{"Submit", trace.Kernel, line(), func() error { return raw.Submit(q, k, rt.Range1(4)) }},
		{"SubmitSkip", trace.Kernel, line(), func() error { return submitWrapper(q, k) }},
		{"Write", trace.Write, line(), func() error { return buf.Write(q, dst) }},
		{"WriteAt", trace.Write, line(), func() error { return buf.WriteAt(q, 1, dst[:2]) }},
		{"Read", trace.Read, line(), func() error { return buf.Read(q, dst) }},
		{"ReadAt", trace.Read, line(), func() error { return buf.ReadAt(q, 1, dst[:2]) }},
		{"Fill", trace.Fill, line(), func() error { return buf.Fill(q, 7) }},
		{"CopyTo", trace.Copy, line(), func() error { return buf.CopyTo(q, other) }},
		{"Marker", trace.Marker, line(), func() error { _, err := q.Marker(); return err }},
		{"generated Enqueue", trace.Kernel, line(), func() error { return enqueueTouch(q, buf) }},
		{"DeviceGlobal.Read", trace.GlobalRead, line(), func() error { _, err := benchGlobal.Read(q); return err }},
		{"DeviceGlobal.Write", trace.GlobalWrite, line(), func() error { return benchGlobal.Write(q, 1) }},
		{"DeviceGlobal.ReadBytes", trace.GlobalRead, line(), func() error { return benchGlobal.ReadBytes(q, 0, make([]byte, 2)) }},
		{"DeviceGlobal.WriteBytes", trace.GlobalWrite, line(), func() error { return benchGlobal.WriteBytes(q, 2, make([]byte, 2)) }},
		{"WriteContext", trace.Write, line(), func() error { return buf.WriteContext(c, q, dst) }},
		{"WriteAtContext", trace.Write, line(), func() error { return buf.WriteAtContext(c, q, 1, dst[:2]) }},
		{"ReadContext", trace.Read, line(), func() error { return buf.ReadContext(c, q, dst) }},
		{"ReadAtContext", trace.Read, line(), func() error { return buf.ReadAtContext(c, q, 1, dst[:2]) }},
		{"generated EnqueueContext", trace.Kernel, line(), func() error { return enqueueTouchContext(c, q, buf) }},
		{"DeviceGlobal.ReadContext", trace.GlobalRead, line(), func() error { _, err := benchGlobal.ReadContext(c, q); return err }},
		{"DeviceGlobal.WriteContext", trace.GlobalWrite, line(), func() error { return benchGlobal.WriteContext(c, q, 1) }},
		{"DeviceGlobal.ReadBytesContext", trace.GlobalRead, line(), func() error { return benchGlobal.ReadBytesContext(c, q, 0, make([]byte, 2)) }},
		{"DeviceGlobal.WriteBytesContext", trace.GlobalWrite, line(), func() error { return benchGlobal.WriteBytesContext(c, q, 2, make([]byte, 2)) }},
	}
	const iters = 3
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			for range iters {
				if err := tt.do(); err != nil {
					t.Fatal(err)
				}
			}
			var nodes []*trace.Node
			begins := 0
			for _, e := range rec.Events() {
				switch e.Kind {
				case trace.NodeCreate:
					nodes = append(nodes, e.Node)
				case trace.TaskBegin:
					begins++
				}
			}
			if len(nodes) != 1 || begins != iters {
				t.Fatalf("%d node_create and %d task_begin, want 1 and %d", len(nodes), begins, iters)
			}
			n := nodes[0]
			if n.Kind != tt.kind || filepath.Base(n.File) != "tracing_test.go" || n.Line != tt.line || !strings.Contains(n.Func, "TestTraceCallSites") {
				t.Errorf("node %v %q at %s (%s:%d), want a %v in TestTraceCallSites at tracing_test.go:%d", n.Kind, n.Name, n.Func, n.File, n.Line, tt.kind, tt.line)
			}
			if n.Instances() != iters {
				t.Errorf("node instances %d, want %d", n.Instances(), iters)
			}
		})
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
}

// line returns the line of its caller.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

// launchWrapper and submitWrapper stand for generated kernel methods.
func launchWrapper(q *rt.Queue, k *raw.Kernel) error {
	_, err := cq(q).LaunchSkip(0, (*core.RawKernel)(k), core.Range1(4))
	return err
}

func submitWrapper(q *rt.Queue, k *raw.Kernel) error {
	return cq(q).SubmitSkip(0, (*core.RawKernel)(k), core.Range1(4))
}

func TestTraceEdgesMatchWaitLists(t *testing.T) {
	ctx, rec := openTraced(t)
	q := ctx.Queue()
	q2, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	a, _ := rt.NewBuffer[int32](ctx, 8)
	b, _ := rt.NewBuffer[int32](ctx, 8)
	k := addOne(t, ctx, a)
	fa, err := a.FillEvent(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.FillEvent(q2, 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		wait []*rt.Event
		do   func(wait []*rt.Event) error
	}{
		{"launch none", nil, func(w []*rt.Event) error { _, err := raw.Launch(q, k, rt.Range1(8), w...); return err }},
		{"launch one", []*rt.Event{fb}, func(w []*rt.Event) error { _, err := raw.Launch(q, k, rt.Range1(8), w...); return err }},
		{"launch two", []*rt.Event{fa, fb}, func(w []*rt.Event) error { _, err := raw.Launch(q, k, rt.Range1(8), w...); return err }},
		{"submit two", []*rt.Event{fa, fb}, func(w []*rt.Event) error { return raw.Submit(q, k, rt.Range1(8), w...) }},
		{"marker two", []*rt.Event{fb, fa}, func(w []*rt.Event) error { _, err := q.Marker(w...); return err }},
		{"read one", []*rt.Event{fb}, func(w []*rt.Event) error { return a.Read(q2, make([]int32, 8), w...) }},
		{"copy nil entry", []*rt.Event{nil, fa}, func(w []*rt.Event) error { return a.CopyTo(q2, b, w...) }},
	}
	taskOf := map[*rt.Event]uint64{}
	for _, e := range rec.Events() {
		if e.Kind == trace.TaskBegin && e.Task.Node.Kind == trace.Fill {
			if e.Task.Queue.ID == 0 {
				taskOf[fa] = e.Task.ID
			} else {
				taskOf[fb] = e.Task.ID
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			if err := tt.do(tt.wait); err != nil {
				t.Fatal(err)
			}
			var want, got []uint64
			for _, w := range tt.wait {
				if w != nil {
					want = append(want, taskOf[w])
				}
			}
			implicit := 0
			for _, e := range rec.Events() {
				if e.Kind != trace.EdgeCreate {
					continue
				}
				if e.Implicit {
					implicit++
				} else {
					got = append(got, e.From.ID)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("explicit edges from tasks %v, want %v", got, want)
			}
			if implicit != 1 {
				t.Errorf("%d implicit edges, want 1", implicit)
			}
		})
	}
}

// TestTraceEnvPerfettoAndSummary traces through DGEN_TRACE with the host
// graph only, device times sampled and device times for every command.
func TestTraceEnvPerfettoAndSummary(t *testing.T) {
	const iters = 20
	tests := []struct {
		device    string // the device= item, if any
		profiling bool
		devSlices int // device slices expected
	}{
		{"", false, 0},
		{",device=off", false, 0},
		{",device=4", true, 5 + 5 + 3}, // 1 in 4 of 20 writes, 20 launches, 10 submits
		{",device=all", true, iters*2 + iters/2},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.device, ","), func(t *testing.T) {
			testTraceEnv(t, tt.device, tt.profiling, tt.devSlices)
		})
	}
}

func testTraceEnv(t *testing.T, device string, profiling bool, devSlices int) {
	dir := t.TempDir()
	file := filepath.Join(dir, "trace.json")
	sum := filepath.Join(dir, "summary.txt")
	env := map[string]string{"DGEN_DEVICE": os.Getenv("DGEN_DEVICE"), "DGEN_TRACE": "perfetto:" + file + ",summary:" + sum + device}
	if env["DGEN_DEVICE"] == "" {
		env["DGEN_DEVICE"] = "cpu"
	}
	cfg, err := rt.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := rt.OpenConfig(withEnv(t, cfg))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	if cq(ctx.Queue()).Profiling() != profiling {
		t.Errorf("tracing context's queue profiles: %v, want %v", cq(ctx.Queue()).Profiling(), profiling)
	}
	q := ctx.Queue()
	buf, _ := rt.NewBuffer[int32](ctx, 64)
	k := addOne(t, ctx, buf)
	var last *rt.Event
	const iters = 20
	for i := range iters {
		if err := buf.Write(q, make([]int32, 64)); err != nil {
			t.Fatal(err)
		}
		if last, err = raw.Launch(q, k, rt.Range1(64), last); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := raw.Submit(q, k, rt.Range1(64), last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := last.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []traceFileEvent
	}
	if err := json.Unmarshal(data, &f.TraceEvents); err != nil {
		t.Fatalf("trace file does not parse: %v", err)
	}
	flows := map[uint64]string{}
	slices := map[string]int{}
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "X":
			if e.Dur <= 0 {
				t.Errorf("%s slice %s has duration %v", e.Cat, e.Name, e.Dur)
			}
			slices[e.Cat]++
		case "s", "f":
			flows[e.ID] += e.Ph
		}
	}
	wantTasks := iters*2 + iters/2 // writes, launches, submits
	if slices["host"] != wantTasks || slices["device"] != devSlices {
		t.Errorf("%d host and %d device slices, want %d and %d", slices["host"], slices["device"], wantTasks, devSlices)
	}
	if len(flows) == 0 {
		t.Error("no flows")
	}
	for id, ph := range flows {
		if ph != "sf" {
			t.Errorf("flow %d has events %q, want s then f", id, ph)
		}
	}
	text, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tracing_test.go:", "add_one", "write buffer"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	var from strings.Builder
	if err := trace.SummarizeFile(file, &from); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(from.String(), "tracing_test.go:") {
		t.Errorf("summary of the file lacks source locations:\n%s", from.String())
	}
}

// traceFileEvent is the part of an event of a perfetto trace file that the
// tests read.
type traceFileEvent struct {
	Name string  `json:"name"`
	Cat  string  `json:"cat"`
	Ph   string  `json:"ph"`
	Dur  float64 `json:"dur"`
	ID   uint64  `json:"id"`
}

func TestTraceMalformedSpec(t *testing.T) {
	tests := []string{"bogus", "perfetto", "summary,,log", "log,log"}
	for _, spec := range tests {
		t.Run(spec, func(t *testing.T) {
			_, err := rt.ConfigFromEnv(func(k string) string {
				if k == trace.EnvVar {
					return spec
				}
				return ""
			})
			if err == nil || !strings.Contains(err.Error(), trace.EnvVar) {
				t.Errorf("ConfigFromEnv with %s=%q: error %v, want one naming the variable", trace.EnvVar, spec, err)
			}
			ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: "cpu", Trace: spec}))
			if err == nil {
				ctx.Close()
				t.Errorf("OpenConfig with Trace %q: no error", spec)
			}
		})
	}
}

// TestTraceConcurrent emits from many goroutines, each with its own queue
// and all on a shared one, with waits across queues.
func TestTraceConcurrent(t *testing.T) {
	ctx, rec := openTraced(t)
	shared := ctx.Queue()
	buf, _ := rt.NewBuffer[int32](ctx, 64)
	const workers, iters = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				errs <- err
				return
			}
			prog, err := raw.Build(ctx, fmt.Sprint("add_one_", w), addOneSrc, "")
			if err != nil {
				errs <- err
				return
			}
			k, err := prog.Kernel("add_one")
			if err == nil {
				err = raw.SetBuffer(k, 0, buf)
			}
			if err != nil {
				errs <- err
				return
			}
			var ev *rt.Event
			for i := range iters {
				if ev, err = raw.Launch(own, k, rt.Range1(64), ev); err != nil {
					errs <- err
					return
				}
				if err = raw.Submit(shared, k, rt.Range1(64), ev); err != nil {
					errs <- err
					return
				}
				if i%5 == 0 {
					if err = own.Finish(); err != nil {
						errs <- err
						return
					}
				}
			}
			if err := own.Finish(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := shared.Finish(); err != nil {
		t.Fatal(err)
	}
	counts := map[trace.Kind]int{}
	ids := map[uint64]bool{}
	for _, e := range rec.Events() {
		counts[e.Kind]++
		if e.Kind == trace.TaskBegin {
			if ids[e.Task.ID] {
				t.Errorf("task id %d begun twice", e.Task.ID)
			}
			ids[e.Task.ID] = true
		}
	}
	n := workers * iters * 2
	if counts[trace.TaskBegin] != n || counts[trace.TaskEnd] != n || counts[trace.TaskComplete] != n {
		t.Errorf("begin %d end %d complete %d, want %d each", counts[trace.TaskBegin], counts[trace.TaskEnd], counts[trace.TaskComplete], n)
	}
	var kinds []string
	for k, c := range counts {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, c))
	}
	sort.Strings(kinds)
	t.Logf("events: %v", kinds)
}

// TestTraceReleasedEvent checks that an Event its owner releases at once
// still has its device times reported: the trace keeps the driver event.
func TestTraceReleasedEvent(t *testing.T) {
	ctx, rec := openTraced(t)
	buf, err := rt.NewBuffer[int32](ctx, 256)
	if err != nil {
		t.Fatal(err)
	}
	k := addOne(t, ctx, buf)
	q := ctx.Queue()
	rec.Reset()
	const n = 5
	for i := 0; i < n; i++ {
		ev, err := raw.Launch(q, k, rt.Range1(256))
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, e := range rec.Events() {
		if e.Kind == trace.TaskComplete && e.Task.Node.Name == "add_one" && e.Task.DevEnd > e.Task.DevStart {
			done++
		}
	}
	if done != n {
		t.Errorf("%d launches with device times, want %d", done, n)
	}
}

// TestTraceDeviceTimes checks that the device times a traced command
// reports (read through the backend's driver.Spanner where it has one) are
// its own: the length of each launch's TaskComplete slice is the length
// its Event's Timing gives, shifted onto the host clock but not stretched
// by more than the clock alignment's rate.
func TestTraceDeviceTimes(t *testing.T) {
	ctx, rec := openTraced(t)
	const items = 1 << 18
	buf, err := rt.NewBuffer[int32](ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	k := addOne(t, ctx, buf)
	q := ctx.Queue()
	rec.Reset()
	var want []int64
	for range 3 {
		ev, err := raw.Launch(q, k, rt.Range1(items))
		if err != nil {
			t.Fatal(err)
		}
		tm, err := ev.Timing()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, int64(tm.Ended-tm.Started))
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, e := range rec.Events() {
		if e.Kind == trace.TaskComplete && e.Task.Node.Name == "add_one" {
			got = append(got, e.Task.DevEnd-e.Task.DevStart)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d launches with device times, want %d", len(got), len(want))
	}
	for i := range want {
		if d := got[i] - want[i]; want[i] < 1000 || d < -want[i]/100-1 || d > want[i]/100+1 {
			t.Errorf("launch %d: traced device time %d ns, want its Timing's %d ns (at least 1 µs)", i, got[i], want[i])
		}
	}
}

// TestTraceSurvivesExit runs a traced process on the test device (PoCL
// unless DGEN_DEVICE says otherwise) that ends without closing its context,
// in each of the four ways a program dies: os.Exit, log.Fatal, an
// unrecovered panic in a goroutine other than main, and SIGKILL sent by this
// test once the child reported its calls. Every write and launch the child
// returned from must be in its perfetto file, with its source line, its
// dependency flow and its device time (the child traces with device=all).
func TestTraceSurvivesExit(t *testing.T) {
	if mode := os.Getenv("DGEN_TEST_TRACE_CHILD"); mode != "" {
		traceChild(t, mode)
		return
	}
	testenv.RequireDevice(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	writeLine, submitLine := sourceLine(t, "if err := buf.Write(q, make([]int32, buf.Len())); err != nil"),
		sourceLine(t, "if err := raw.Submit(q, k, rt.Range1(buf.Len())); err != nil")
	for _, mode := range []string{"exit", "fatal", "panic", "kill"} {
		t.Run(mode, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "trace.json")
			cmd := exec.Command(exe, "-test.run=^TestTraceSurvivesExit$", "-test.v")
			cmd.Env = append(os.Environ(), "DGEN_TEST_TRACE_CHILD="+mode, "DGEN_TRACE=perfetto:"+file+",summary,device=all")
			if os.Getenv("DGEN_DEVICE") == "" {
				cmd.Env = append(cmd.Env, "DGEN_DEVICE=cpu")
			}
			out := runTraceChild(t, cmd, mode == "kill")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var js strings.Builder
			if err := trace.Convert(&js, data); err != nil {
				t.Fatalf("trace file does not convert: %v\n%s", err, out)
			}
			var events []struct {
				traceFileEvent
				Args struct {
					File string `json:"file"`
					Line int    `json:"line"`
				} `json:"args"`
			}
			if err := json.Unmarshal([]byte(js.String()), &events); err != nil {
				t.Fatalf("converted trace does not load: %v", err)
			}
			lines := map[string]int{}
			flows := map[uint64]string{}
			for _, e := range events {
				switch {
				case e.Ph == "X" && (e.Cat == "host" || e.Cat == "device") && strings.HasSuffix(e.Args.File, "tracing_test.go"):
					lines[fmt.Sprintf("%s %s:%d", e.Cat, e.Name, e.Args.Line)]++
				case (e.Ph == "s" || e.Ph == "f") && e.Cat == "dep":
					flows[e.ID] += e.Ph
				}
			}
			for _, cat := range []string{"host", "device"} {
				for _, want := range []string{fmt.Sprintf("write buffer:%d", writeLine), fmt.Sprintf("add_one:%d", submitLine)} {
					if n := lines[cat+" "+want]; n != childCommands {
						t.Errorf("%d %s slices of %s, want %d (all: %v)", n, cat, want, childCommands, lines)
					}
				}
			}
			whole := 0
			for _, ph := range flows {
				if ph == "sf" {
					whole++
				}
			}
			if whole < 2*childCommands-1 {
				t.Errorf("%d dependency flows, want at least %d", whole, 2*childCommands-1)
			}
			if _, err := trace.ReadSummary(file); err != nil {
				t.Errorf("ReadSummary: %v", err)
			}
		})
	}
}

// sourceLine returns the line of this file that contains text.
func sourceLine(t *testing.T, text string) int {
	t.Helper()
	src, err := os.ReadFile("tracing_test.go")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no tracing_test.go beside the test binary (a gpu-bundle): the source lines to check are unknown")
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("no line %q in tracing_test.go", text)
	return 0
}

// runTraceChild runs a child process that must fail. With kill, it waits for
// the child to print "ready" and sends it SIGKILL.
func runTraceChild(t *testing.T, cmd *exec.Cmd, kill bool) string {
	t.Helper()
	var out strings.Builder
	var err error
	if !kill {
		b, e := cmd.CombinedOutput()
		out.Write(b)
		err = e
	} else {
		pipe, perr := cmd.StdoutPipe()
		if perr != nil {
			t.Fatal(perr)
		}
		cmd.Stderr = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		for !strings.Contains(out.String(), "ready") {
			n, rerr := pipe.Read(buf)
			out.Write(buf[:n])
			if rerr != nil {
				break
			}
		}
		cmd.Process.Kill()
		err = cmd.Wait()
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child: %v, want it to fail\n%s", err, out.String())
	}
	return out.String()
}

const childCommands = 10

// traceChild is the child process of TestTraceSurvivesExit: it makes
// childCommands writes and launches, waits for them, and dies.
func traceChild(t *testing.T, mode string) {
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	q, buf, k := addOneSetup(t, ctx)
	for range childCommands {
		writeThenAdd(t, q, buf, k)
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "exit":
		os.Exit(3)
	case "fatal":
		log.Fatal("the traced child gives up")
	case "panic":
		go panic("the traced child crashes")
	case "kill":
		fmt.Println("ready")
	}
	select {}
}

// TestTraceRanges checks that a user range drawn by the perfetto writer
// contains, on the same track, the commands enqueued within it.
func TestTraceRanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.json")
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testDevice(), Trace: "perfetto:" + file}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	q, buf, k := addOneSetup(t, ctx)
	r := ctx.Tracer().Range("solve")
	writeThenAdd(t, q, buf, k)
	r.End()
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var events []struct {
		Name string  `json:"name"`
		Cat  string  `json:"cat"`
		Ph   string  `json:"ph"`
		Tid  int     `json:"tid"`
		Ts   float64 `json:"ts"`
		Dur  float64 `json:"dur"`
	}
	if err := json.Unmarshal(data, &events); err != nil {
		t.Fatal(err)
	}
	var ranges, inside int
	for _, r := range events {
		if r.Cat != "range" || r.Name != "solve" {
			continue
		}
		ranges++
		for _, c := range events {
			if c.Cat == "host" && c.Tid == r.Tid && c.Ts >= r.Ts && c.Ts+c.Dur <= r.Ts+r.Dur {
				inside++
			}
		}
	}
	if ranges != 1 || inside != 2 {
		t.Errorf("%d ranges holding %d commands, want 1 holding the write and the launch", ranges, inside)
	}
}

// TestTwoContextsOnePath opens two contexts with the same
// DGEN_TRACE=perfetto:PATH, as a service that opens a context per device
// or per tenant does: the second opens without the file, saying so in one
// warning through its logger (it used to truncate the first's file: SIGBUS
// at the second Open), and the first's trace is whole.
func TestTwoContextsOnePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	first, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testDevice(), Cache: &cc, Trace: "perfetto:" + path}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	var log lockedBuffer
	second, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testDevice(), Cache: &cc, Trace: "perfetto:" + path, Logger: slog.New(slog.NewTextHandler(&log, nil))}))
	if err != nil {
		first.Close()
		t.Fatalf("second context: %v, want it to open without the trace file", err)
	}
	for _, ctx := range []*rt.Context{first, second} {
		ev, err := ctx.Queue().Marker()
		if err == nil {
			err = ev.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if w := log.String(); strings.Count(w, "level=WARN") != 1 || !strings.Contains(w, trace.ErrBusy.Error()) {
		t.Errorf("second context's log %q, want one warning that the file is another tracer's", w)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []struct{ Name string }
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatalf("the first context's trace does not parse: %v", err)
	}
	markers := 0
	for _, e := range evs {
		if e.Name == "marker" {
			markers++
		}
	}
	if markers == 0 {
		t.Errorf("the first context's trace has no marker: %s", data)
	}
}
