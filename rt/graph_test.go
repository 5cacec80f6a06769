package rt_test

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

const axpbSrc = `
__kernel void axpb(__global const float *x, __global float *y, float a, float b, int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + b;
}
`

// loopGraphs turns the device API's own graph objects off, through the
// environment (withEnv), for the contexts that the test opens next: their
// graphs replay as loops of prepared commands.
func loopGraphs(t testing.TB) { t.Setenv("DGEN_GRAPHS", "loop") }

// checkNative checks how g was prepared: never as the device API's own
// graph object in mode "loop"; as PoCL's command buffer in mode
// "command-buffer" on PoCL (which has cl_khr_command_buffer).
func checkNative(t *testing.T, ctx *rt.Context, g *rt.Graph, mode string) {
	t.Helper()
	native := core.GraphNative(cg(g))
	if len(native) != 1 {
		t.Fatalf("prepared for %d queues, want 1", len(native))
	}
	pocl := strings.Contains(ctx.Devices()[0].Platform, "Portable Computing Language")
	if want := mode != "loop" && pocl; native[0] != want && (mode == "loop" || pocl) {
		t.Errorf("mode %s: prepared as the device's own graph object: %v, want %v", mode, native[0], want)
	}
}

// graphFixture is a context with the axpb kernel and two buffers.
type graphFixture struct {
	ctx  *rt.Context
	q    *rt.Queue
	k    *raw.Kernel
	x, y rt.Buffer[float32]
	n    int
}

func newGraphFixture(t testing.TB, ctx *rt.Context) *graphFixture {
	t.Helper()
	prog, err := raw.Build(ctx, "axpb", axpbSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("axpb")
	if err != nil {
		t.Fatal(err)
	}
	f := &graphFixture{ctx: ctx, q: ctx.Queue(), k: k, n: 1000}
	if f.x, err = rt.NewBuffer[float32](ctx, f.n); err != nil {
		t.Fatal(err)
	}
	if f.y, err = rt.NewBuffer[float32](ctx, f.n); err != nil {
		t.Fatal(err)
	}
	return f
}

// step enqueues y = a*x + b on q.
func (f *graphFixture) step(q *rt.Queue, x, y rt.Buffer[float32], a, b float32) error {
	err := errors.Join(raw.SetBuffer(f.k, 0, x), raw.SetBuffer(f.k, 1, y), raw.SetArg(f.k, 2, a), raw.SetArg(f.k, 3, b), raw.SetArg(f.k, 4, int32(f.n)))
	if err != nil {
		return err
	}
	return raw.Submit(q, f.k, rt.Range1(f.n))
}

// body enqueues the commands the replay tests record: a fill, a
// ping-pong pair of steps, and a copy.
func (f *graphFixture) body(q *rt.Queue) error {
	if err := f.y.Fill(q, 7); err != nil {
		return err
	}
	for range 3 {
		if err := f.step(q, f.x, f.y, 0.5, 1); err != nil {
			return err
		}
		if err := f.step(q, f.y, f.x, 1.5, -0.25); err != nil {
			return err
		}
	}
	err := f.x.CopyTo(q, f.y)
	return err
}

func (f *graphFixture) read(t *testing.T) []float32 {
	t.Helper()
	got := make([]float32, f.n)
	if err := f.y.Read(f.q, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestGraphReplay records writes, fills, launches and copies, and checks
// that every launch of the graph gives what the same commands give
// without one, bit for bit: as a command buffer where the device has
// cl_khr_command_buffer, and as a loop of prepared enqueues.
func TestGraphReplay(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			f := newGraphFixture(t, openCPU(t))
			init := make([]float32, f.n)
			for i := range init {
				init[i] = float32(i)*0.37 - 3
			}
			if err := f.x.Write(f.q, init); err != nil {
				t.Fatal(err)
			}
			if err := f.body(f.q); err != nil {
				t.Fatal(err)
			}
			want := f.read(t)
			if err := f.y.Write(f.q, make([]float32, f.n)); err != nil {
				t.Fatal(err)
			}
			q2, err := f.ctx.NewQueue(f.q.Device())
			if err != nil {
				t.Fatal(err)
			}
			g, err := f.q.Record("replay", func(q *rt.Queue) error {
				if err := f.body(q); err != nil {
					return err
				}
				// Recording ran nothing (a blocking read on the recording
				// queue is an error: read on another).
				probe := make([]float32, f.n)
				if err := f.y.Read(q2, probe); err != nil || probe[5] != 0 {
					t.Errorf("recording executed commands: y[5] = %v (%v)", probe[5], err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			checkNative(t, f.ctx, g, mode)
			for i := range 3 {
				if err := errors.Join(f.x.Write(f.q, init), f.y.Write(f.q, make([]float32, f.n))); err != nil {
					t.Fatal(err)
				}
				if err := g.Launch(f.q); err != nil {
					t.Fatal(err)
				}
				got := f.read(t)
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("launch %d: y[%d] = %v, want %v", i, j, got[j], want[j])
					}
				}
			}
		})
	}
}

// TestGraphUpdate swaps the buffers of a recorded launch and changes a
// scalar, and checks the errors of updates that do not fit.
func TestGraphUpdate(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			f := newGraphFixture(t, openCPU(t))
			ones := make([]float32, f.n)
			for i := range ones {
				ones[i] = 1
			}
			if err := f.x.Write(f.q, ones); err != nil {
				t.Fatal(err)
			}
			var nodes [3]*rt.GraphNode
			g, err := f.q.Record("update", func(q *rt.Queue) error {
				var err error
				if nodes[0], err = q.Node(func(q *rt.Queue) error { return f.step(q, f.x, f.y, 2, 1) }); err != nil {
					return err
				}
				if nodes[1], err = q.Node(func(q *rt.Queue) error { // not a launch
					err := f.y.Fill(q, 0)
					return err
				}); err != nil {
					return err
				}
				nodes[2], err = q.Node(func(q *rt.Queue) error { return f.step(q, f.x, f.y, 2, 1) })
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			if err := g.Launch(f.q); err != nil {
				t.Fatal(err)
			}
			if got := f.read(t); got[0] != 3 {
				t.Fatalf("y[0] = %v, want 3", got[0])
			}
			// Swap: y = 4*x + 0 into x, from y (= 3).
			if err := g.Update(nodes[2], func(q *rt.Queue) error { return f.step(q, f.y, f.x, 4, 0) }); err != nil {
				t.Fatal(err)
			}
			if err := g.Launch(f.q); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, f.n)
			if err := f.x.Read(f.q, got); err != nil {
				t.Fatal(err)
			}
			// command 0: y = 2*1+1 = 3; command 1: y = 0; command 2: x = 4*y = 0.
			if got[0] != 0 {
				t.Fatalf("after the update x[0] = %v, want 0", got[0])
			}

			prog2, err := raw.Build(f.ctx, "saxpy", saxpySrc, "")
			if err != nil {
				t.Fatal(err)
			}
			other, err := prog2.Kernel("saxpy")
			if err != nil {
				t.Fatal(err)
			}
			var foreign *rt.GraphNode
			g2, err := f.q.Record("other", func(q *rt.Queue) error {
				var err error
				foreign, err = q.Node(func(q *rt.Queue) error { return f.step(q, f.x, f.y, 1, 1) })
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g2.Release()
			bad := []struct {
				name string
				node *rt.GraphNode
				fn   func(q *rt.Queue) error
				want string
			}{
				{"another graph's node", foreign, func(q *rt.Queue) error { return nil }, "a node of another graph"},
				{"nil node", nil, func(q *rt.Queue) error { return nil }, "a node of another graph"},
				{"not a launch", nodes[1], func(q *rt.Queue) error { return nil }, "only kernel launches"},
				{"no launch", nodes[0], func(q *rt.Queue) error { return nil }, "enqueued 0 kernel launches"},
				{"two launches", nodes[0], func(q *rt.Queue) error {
					return errors.Join(f.step(q, f.x, f.y, 1, 1), f.step(q, f.x, f.y, 1, 1))
				}, "enqueued 2 kernel launches"},
				{"wrong type", nodes[0], func(q *rt.Queue) error {
					err := errors.Join(raw.SetBuffer(f.k, 0, f.x), raw.SetBuffer(f.k, 1, f.y), raw.SetBuffer(f.k, 2, f.y), raw.SetArg(f.k, 3, float32(1)), raw.SetArg(f.k, 4, int32(f.n)))
					return errors.Join(err, raw.Submit(q, f.k, rt.Range1(f.n)))
				}, "argument 2: invalid argument: a buffer where the command has a value of 4 bytes"},
				{"another kernel", nodes[0], func(q *rt.Queue) error {
					err := errors.Join(raw.SetArg(other, 0, float32(1)), raw.SetBuffer(other, 1, f.x), raw.SetBuffer(other, 2, f.y), raw.SetArg(other, 3, int32(1)))
					return errors.Join(err, raw.Submit(q, other, rt.Range1(1)))
				}, `launches kernel "saxpy"`},
				{"a fill", nodes[0], func(q *rt.Queue) error { return f.x.Fill(q, 1) }, "not a fill buffer"},
			}
			for _, tc := range bad {
				err := g.Update(tc.node, tc.fn)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `graph "update"`) {
					t.Errorf("%s: got %v, want an error naming the graph and %q", tc.name, err, tc.want)
				}
			}
			// The failed updates changed nothing.
			if err := f.x.Write(f.q, ones); err != nil {
				t.Fatal(err)
			}
			if err := g.Launch(f.q); err != nil {
				t.Fatal(err)
			}
			if err := f.x.Read(f.q, got); err != nil {
				t.Fatal(err)
			}
			if got[0] != 0 {
				t.Fatalf("after failed updates x[0] = %v, want 0", got[0])
			}
		})
	}
}

// TestGraphBadInput checks the errors of misuse: each names the graph and
// the command, and leaves the graph, the queue and the data usable.
func TestGraphBadInput(t *testing.T) {
	ctx := openCPU(t)
	f := newGraphFixture(t, ctx)
	var other *rt.Graph
	var leaked *rt.Queue
	g, err := f.q.Record("bad", func(q *rt.Queue) error {
		if _, err := q.Record("again", func(*rt.Queue) error { return nil }); err == nil || !strings.Contains(err.Error(), `records graph "bad"`) {
			t.Errorf("Record while recording: %v", err)
		}
		// A blocking read cannot be recorded, nor can a launch with an
		// event or a marker; the recording goes on.
		dst := make([]float32, f.n)
		if err := f.y.Read(q, dst); err == nil || !strings.Contains(err.Error(), "blocking read") || !strings.Contains(err.Error(), `graph "bad"`) {
			t.Errorf("recorded blocking read: %v", err)
		}
		if _, err := q.Marker(); err == nil || !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("recorded marker: %v", err)
		}
		if err := errors.Join(raw.SetBuffer(f.k, 0, f.x), raw.SetBuffer(f.k, 1, f.y), raw.SetArg(f.k, 2, float32(1)), raw.SetArg(f.k, 3, float32(1)), raw.SetArg(f.k, 4, int32(f.n))); err != nil {
			return err
		}
		if _, err := raw.Launch(q, f.k, rt.Range1(f.n)); err == nil || !strings.Contains(err.Error(), "no event") {
			t.Errorf("recorded launch with an event: %v", err)
		}
		leaked = q
		// Graphs do not nest.
		if other != nil {
			if err := other.Launch(q); err == nil || !strings.Contains(err.Error(), "do not nest") {
				t.Errorf("launch of a graph on a recording queue: %v", err)
			}
		}
		return f.step(q, f.x, f.y, 1, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	other = g
	// The recording queue records nothing once its function has returned.
	if err := f.step(leaked, f.x, f.y, 1, 2); err == nil || !strings.Contains(err.Error(), "records nothing more") {
		t.Errorf("enqueue on the recording queue after Record: %v", err)
	}
	if _, err := leaked.Node(func(q *rt.Queue) error { return nil }); err == nil {
		t.Error("Node on the recording queue after Record: no error")
	}
	other = g
	if _, err := f.q.Record("nest", func(q *rt.Queue) error { return other.Launch(q) }); err == nil || !strings.Contains(err.Error(), "do not nest") {
		t.Errorf("launch of a graph on a recording queue: %v", err)
	}
	// A failing recording returns its error and no graph.
	boom := errors.New("boom")
	if g2, err := f.q.Record("failing", func(q *rt.Queue) error { return boom }); g2 != nil || !errors.Is(err, boom) || !strings.Contains(err.Error(), `graph "failing"`) {
		t.Errorf("failing record: %v, %v", g2, err)
	}
	// A queue of another context.
	ctx2 := openCPU(t)
	if err := g.Launch(ctx2.Queue()); err == nil || !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), `graph "bad"`) {
		t.Errorf("launch on another context: %v", err)
	}
	if err := g.Launch(f.q); err != nil {
		t.Fatal(err)
	}
	// A freed buffer: the error names the command and where it was recorded.
	if err := f.y.Free(); err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	err = g.Launch(f.q)
	if !errors.Is(err, rt.ErrFreed) || !strings.Contains(err.Error(), `command 0 (kernel "axpb" at `+file) {
		t.Errorf("launch with a freed buffer: %v", err)
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(f.q); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("launch after Release: %v", err)
	}
	// The queue works after all this.
	if err := f.step(f.q, f.x, f.x, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.q.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestGraphClose closes a context with a graph launched and not waited
// for, from inside the recording of another: Close waits for the launch
// and releases the graph, which reports ErrClosed after; the recording
// that closed its context returns ErrClosed.
func TestGraphClose(t *testing.T) {
	ctx := openCPU(t)
	f := newGraphFixture(t, ctx)
	g, err := f.q.Record("inflight", func(q *rt.Queue) error {
		for range 50 {
			if err := f.step(q, f.x, f.y, 1, 2); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	q2, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(f.q); err != nil {
		t.Fatal(err)
	}
	rec, err := q2.Record("recording", func(q *rt.Queue) error {
		if err := f.step(q, f.x, f.y, 1, 2); err != nil {
			return err
		}
		return ctx.Close()
	})
	if rec != nil || !errors.Is(err, rt.ErrClosed) || !strings.Contains(err.Error(), `graph "recording"`) {
		t.Errorf("recording that closed its context: %v, %v", rec, err)
	}
	if err := g.Launch(f.q); !errors.Is(err, rt.ErrClosed) || !strings.Contains(err.Error(), `graph "inflight"`) {
		t.Errorf("launch after Close: %v", err)
	}
	if err := g.Release(); err != nil {
		t.Errorf("release after Close: %v", err)
	}
}

// TestGraphOwnsAllocations checks that memory allocated on a recording
// queue is the graph's, freed by Release.
func TestGraphOwnsAllocations(t *testing.T) {
	ctx := openCPU(t)
	f := newGraphFixture(t, ctx)
	var tmp rt.Buffer[float32]
	g, err := f.q.Record("owner", func(q *rt.Queue) error {
		var err error
		if tmp, err = rt.Alloc[float32](q, f.n); err != nil {
			return err
		}
		return errors.Join(f.step(q, f.x, tmp, 1, 2), f.step(q, tmp, f.y, 2, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.x.Write(f.q, make([]float32, f.n)); err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(f.q); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t); got[3] != 4 {
		t.Fatalf("y[3] = %v, want 4", got[3])
	}
	inUse := ctx.Stats().Alloc.Total().InUse
	if inUse == 0 {
		t.Fatal("no allocator memory in use")
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if got := ctx.Stats().Alloc.Total().InUse; got != 0 {
		t.Errorf("in use after Release: %d bytes, want 0 (%d before)", got, inUse)
	}
	if err := tmp.Free(); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("Free of the graph's memory after Release: %v", err)
	}
	// A recording that fails frees what it allocated.
	boom := errors.New("boom")
	_, err = f.q.Record("failing", func(q *rt.Queue) error {
		if _, err := rt.Alloc[float32](q, f.n); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got := ctx.Stats().Alloc.Total().InUse; got != 0 {
		t.Errorf("in use after a failed recording: %d bytes, want 0", got)
	}
}

// TestGraphTrace checks that a traced graph launch is one task of kind
// graph, at the line of the launch, holding its commands' tasks at the
// lines that recorded them, with device times sampled and without, and
// that it draws no user range beside it.
func TestGraphTrace(t *testing.T) {
	for _, sampling := range []int{0, 1} {
		t.Run(fmt.Sprintf("device=%d", sampling), func(t *testing.T) {
			tr := trace.New()
			tr.SetDeviceSampling(sampling)
			rec := &trace.Recorder{}
			tr.Subscribe(rec)
			ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testDevice(), Tracer: tr}))
			if err != nil {
				testenv.SkipWithoutDevice(t, err)
				t.Fatal(err)
			}
			defer ctx.Close()
			testGraphTrace(t, ctx, rec)
		})
	}
}

func testGraphTrace(t *testing.T, ctx *rt.Context, rec *trace.Recorder) {
	f := newGraphFixture(t, ctx)
	var file string
	var line int
	g, err := f.q.Record("traced", func(q *rt.Queue) error {
		_, file, line, _ = runtime.Caller(0)
		if err := f.step(q, f.x, f.y, 1, 2); err != nil { // the step's Submit is in step, one frame down
			return err
		}
		err := f.y.Fill(q, 1) // line+4
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	rec.Reset()
	_, _, launchLine, _ := runtime.Caller(0)
	if err := g.Launch(f.q); err != nil { // launchLine+1
		t.Fatal(err)
	}
	var launch []trace.Event
	var tasks []trace.Event
	for _, e := range rec.Events() {
		switch e.Kind {
		case trace.UserRange:
			t.Errorf("a user range %q beside the graph's task", e.Name)
		case trace.TaskEnd:
			if n := e.Task.Node; n.Kind == trace.Graph {
				launch = append(launch, e)
				if n.Name != "graph traced" || n.File != file || n.Line != launchLine+1 {
					t.Errorf("the graph's launch %q recorded at %s:%d, want %q at %s:%d", n.Name, n.File, n.Line, "graph traced", file, launchLine+1)
				}
			} else {
				tasks = append(tasks, e)
			}
		}
	}
	if len(launch) != 1 || len(tasks) != 2 {
		t.Fatalf("%d tasks of kind graph and %d others, want 1 and 2", len(launch), len(tasks))
	}
	for _, tk := range tasks {
		if l := launch[0].Task; tk.Task.HostBegin < l.HostBegin || tk.Task.HostEnd > l.HostEnd {
			t.Errorf("task %s outside the graph's", tk.Task.Node.Name)
		}
	}
	if n := tasks[1].Task.Node; n.File != file || n.Line != line+4 || n.Kind != trace.Fill {
		t.Errorf("fill recorded at %s:%d (%v), want %s:%d", n.File, n.Line, n.Kind, file, line+4)
	}
	if n := tasks[0].Task.Node; n.Name != "axpb" || !strings.HasSuffix(n.Func, "graphFixture).step") {
		t.Errorf("launch recorded at %s (%s:%d)", n.Func, n.File, n.Line)
	}
}

// TestGraphCrossQueueReuse is TestCrossQueueReuse's program with the slow
// reader in a graph: a block read by a graph launched on queue A, freed at
// once and reused on queue B, is overwritten there only after the launch.
func TestGraphCrossQueueReuse(t *testing.T) {
	const n, iters, trials = 1 << 16, 400, 10
	r := newCrossQueueRig(t, rt.AllocFull)
	bad := 0
	for range trials {
		in, err := rt.Alloc[float32](r.qa, n)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := rt.NewBuffer[float32](r.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		// Filled on B, so that only the graph's launch uses it on A.
		if err := errors.Join(in.Fill(r.qb, 1), r.qb.Finish()); err != nil {
			t.Fatal(err)
		}
		g, err := r.qa.Record("slow", func(q *rt.Queue) error {
			return errors.Join(raw.SetBuffer(r.slowSum, 0, in), raw.SetBuffer(r.slowSum, 1, sum), raw.SetArg(r.slowSum, 2, int32(iters)), raw.Submit(q, r.slowSum, rt.Range1(n)))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(g.Launch(r.qa), r.qa.Flush(), in.Free()); err != nil {
			t.Fatal(err)
		}
		reused, err := rt.Alloc[float32](r.qb, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(raw.SetBuffer(r.set, 0, reused), raw.SetArg(r.set, 1, float32(2)), raw.Submit(r.qb, r.set, rt.Range1(n)), r.qb.Flush()); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, n)
		if err := sum.Read(r.qa, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != iters {
				bad++
			}
		}
		if err := errors.Join(r.qb.Finish(), reused.Free(), sum.Free(), g.Release()); err != nil {
			t.Fatal(err)
		}
	}
	if bad != 0 {
		t.Errorf("%d elements corrupted in %d trials", bad, trials)
	}
	if s := r.ctx.Stats().Alloc.Total(); s.Ordered == 0 {
		t.Errorf("stats %+v: no reuse was ordered after the graph's launch", s)
	}
}

// TestGraphConfigEnv: DGEN_GRAPHS, and its old names
// DGEN_OPENCL_COMMAND_BUFFER and DGEN_CUDA_GRAPH (0 is loop, on every
// backend), read by Open, choose how graphs are prepared; a malformed
// value fails Open naming the variable.
func TestGraphConfigEnv(t *testing.T) {
	tests := []struct {
		graphs, cb, cu string
		mode           string // for checkNative; "" for an error
		err            string
	}{
		{"", "", "", "command-buffer", ""},
		{"native", "", "", "command-buffer", ""},
		{"loop", "", "", "loop", ""},
		{"", "1", "yes", "command-buffer", ""},
		{"", "0", "0", "loop", ""},
		{"", "off", "", "loop", ""},
		{"", "", "0", "loop", ""},
		{"auto", "0", "", "command-buffer", ""}, // the new name wins
		{"sometimes", "", "", "", `DGEN_GRAPHS="sometimes"`},
		{"", "sometimes", "", "", `DGEN_OPENCL_COMMAND_BUFFER="sometimes" (Config.Graphs): want 1`},
		{"", "", "2", "", `DGEN_CUDA_GRAPH="2" (Config.Graphs): want 1`},
	}
	for _, tt := range tests {
		t.Run(tt.graphs+","+tt.cb+","+tt.cu, func(t *testing.T) {
			t.Setenv("DGEN_GRAPHS", tt.graphs)
			t.Setenv("DGEN_OPENCL_COMMAND_BUFFER", tt.cb)
			t.Setenv("DGEN_CUDA_GRAPH", tt.cu)
			if tt.err != "" {
				t.Setenv("DGEN_DEVICE", "cpu")
				ctx, err := rt.Open()
				if err == nil {
					ctx.Close()
				}
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("open: %v, want an error that says %q", err, tt.err)
				}
				return
			}
			f := newGraphFixture(t, openCPU(t))
			g, err := f.q.Record("env", func(q *rt.Queue) error { return f.step(q, f.x, f.y, 1, 2) })
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			checkNative(t, f.ctx, g, tt.mode)
		})
	}
}

// TestRecordConcurrent records on a queue while other goroutines write,
// launch and read on that same queue, and two more record on it too: the
// others' commands run at once and are not recorded, and each graph holds
// its own goroutine's commands alone. Run it with -race.
func TestRecordConcurrent(t *testing.T) {
	ctx := openCPU(t)
	f := newGraphFixture(t, ctx)
	prog, err := raw.Build(ctx, "axpb", axpbSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	const workers, recorders = 4, 2
	ones := make([]float32, f.n)
	for i := range ones {
		ones[i] = 1
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers+recorders)
	// work runs y = a*x + b on the shared queue with a kernel object of
	// its own, and checks y.
	work := func(a float32) error {
		k, err := prog.Kernel("axpb")
		if err != nil {
			return err
		}
		x, err := rt.NewBuffer[float32](ctx, f.n)
		if err != nil {
			return err
		}
		defer x.Free()
		y, err := rt.NewBuffer[float32](ctx, f.n)
		if err != nil {
			return err
		}
		defer y.Free()
		err = errors.Join(x.Write(f.q, ones), raw.SetBuffer(k, 0, x), raw.SetBuffer(k, 1, y), raw.SetArg(k, 2, a), raw.SetArg(k, 3, float32(1)), raw.SetArg(k, 4, int32(f.n)))
		if err == nil {
			err = raw.Submit(f.q, k, rt.Range1(f.n))
		}
		got := make([]float32, f.n)
		if err == nil {
			err = y.Read(f.q, got)
		}
		if err == nil && got[f.n-1] != a+1 {
			err = fmt.Errorf("worker %v: y = %v, want %v: its launch did not run", a, got[f.n-1], a+1)
		}
		return err
	}
	graphs := make([]*rt.Graph, recorders)
	outs := make([]rt.Buffer[float32], recorders)
	for r := range recorders {
		if outs[r], err = rt.NewBuffer[float32](ctx, f.n); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := prog.Kernel("axpb")
			if err != nil {
				errs <- err
				return
			}
			graphs[r], err = f.q.Record(fmt.Sprint("concurrent ", r), func(q *rt.Queue) error {
				// The workers run while this goroutine records.
				var ww sync.WaitGroup
				for w := range workers / recorders {
					ww.Add(1)
					go func() {
						defer ww.Done()
						errs <- work(float32(10*r + w + 2))
					}()
				}
				defer ww.Wait()
				err := errors.Join(raw.SetBuffer(k, 0, f.x), raw.SetBuffer(k, 1, outs[r]), raw.SetArg(k, 2, float32(r+1)), raw.SetArg(k, 3, float32(0)), raw.SetArg(k, 4, int32(f.n)))
				if err != nil {
					return err
				}
				return raw.Submit(q, k, rt.Range1(f.n))
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	if err := f.x.Write(f.q, ones); err != nil {
		t.Fatal(err)
	}
	for r, g := range graphs {
		defer g.Release()
		if n := core.GraphLen(cg(g)); n != 1 {
			t.Errorf("graph %d holds %d commands, want its own 1", r, n)
		}
		got := make([]float32, f.n)
		if err := errors.Join(outs[r].Write(f.q, make([]float32, f.n)), g.Launch(f.q), outs[r].Read(f.q, got)); err != nil {
			t.Fatal(err)
		}
		if got[0] != float32(r+1) {
			t.Errorf("graph %d: out = %v, want %v", r, got[0], r+1)
		}
	}
}

// TestGraphPinned records a transfer from pinned memory, a launch and a
// transfer back into pinned memory, and launches the graph for several
// frames: each launch reads the frame the program just put in the pinned
// memory, and writes its result there. Freed pinned memory is an error.
func TestGraphPinned(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			f := newGraphFixture(t, openCPU(t))
			in, err := rt.NewPinned[float32](f.q, f.n)
			if err != nil {
				t.Fatal(err)
			}
			out, err := rt.NewPinned[float32](f.q, f.n)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Free()
			g, err := f.q.Record("pinned", func(q *rt.Queue) error {
				return errors.Join(released(f.x.WriteAsync(q, 0, in)), f.step(q, f.x, f.y, 2, 1), released(f.y.ReadAsync(q, 0, out)))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			// PoCL's command buffers hold no host transfers: a loop (a CUDA
			// graph holds them).
			if pocl := strings.Contains(f.ctx.Devices()[0].Platform, "Portable Computing Language"); pocl && core.GraphNative(cg(g))[0] {
				t.Error("a graph with pinned transfers prepared as a PoCL command buffer")
			}
			for frame := range 4 {
				for i := range in.Slice() {
					in.Slice()[i] = float32(frame*1000 + i)
				}
				if err := errors.Join(g.Launch(f.q), f.q.Finish()); err != nil {
					t.Fatal(err)
				}
				for i, v := range out.Slice() {
					if want := 2*float32(frame*1000+i) + 1; v != want {
						t.Fatalf("frame %d: out[%d] = %v, want %v (a launch replayed old data)", frame, i, v, want)
					}
				}
			}
			if err := in.Free(); err != nil {
				t.Fatal(err)
			}
			if err := g.Launch(f.q); !errors.Is(err, rt.ErrFreed) || !strings.Contains(err.Error(), "command 0 (write buffer") {
				t.Errorf("launch after the pinned memory's Free: %v, want ErrFreed naming command 0", err)
			}
		})
	}
}

// TestGraphPinnedFreeWaits frees pinned memory while launches of a graph
// that reads it may be in flight: Free waits for them, and later launches
// fail with ErrFreed.
func TestGraphPinnedFreeWaits(t *testing.T) {
	f := newGraphFixture(t, openCPU(t))
	in, err := rt.NewPinned[float32](f.q, f.n)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.q.Record("free", func(q *rt.Queue) error {
		return errors.Join(released(f.x.WriteAsync(q, 0, in)), f.step(q, f.x, f.y, 1, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			if err := g.Launch(f.q); err != nil {
				if !errors.Is(err, rt.ErrFreed) {
					t.Error(err)
				}
				return
			}
		}
	}()
	if err := in.Free(); err != nil {
		t.Error(err)
	}
	wg.Wait()
	if err := f.q.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestGraphRefusesBlocking: a blocking transfer of Go memory inside Record
// is an error that names the way (pinned memory, or around the launch),
// records nothing and leaves the recording going.
func TestGraphRefusesBlocking(t *testing.T) {
	f := newGraphFixture(t, openCPU(t))
	buf := make([]float32, f.n)
	tests := []struct {
		name string
		do   func(q *rt.Queue) error
		want string
	}{
		{"Write", func(q *rt.Queue) error { return f.x.Write(q, buf) }, "WriteAsync"},
		{"WriteAt", func(q *rt.Queue) error { return f.x.WriteAt(q, 1, buf[1:]) }, "pinned memory"},
		{"Read", func(q *rt.Queue) error { return f.x.Read(q, buf) }, "ReadAsync"},
		{"DeviceGlobal.Write", func(q *rt.Queue) error { return benchGlobal.Write(q, 7) }, "pass the value as a kernel argument"},
		{"DeviceGlobal.Read", func(q *rt.Queue) error { _, err := benchGlobal.Read(q); return err }, "around Graph.Launch"},
	}
	g, err := f.q.Record("refuse", func(q *rt.Queue) error {
		for _, tt := range tests {
			err := tt.do(q)
			if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `graph "refuse"`) {
				t.Errorf("%s while recording: %v, want an error naming %q", tt.name, err, tt.want)
			}
		}
		return f.step(q, f.x, f.y, 1, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if n := core.GraphLen(cg(g)); n != 1 {
		t.Errorf("the graph holds %d commands, want 1: a refused transfer was recorded", n)
	}
}

// TestGraphDeviceTimes launches a graph in a context that reports device
// times: its kernels report their own (a loop of prepared commands, CUDA
// with CUPTI), or a task named after the graph reports the launch's (a
// command buffer, a CUDA graph without CUPTI). On PoCL the loop times the
// fill too.
func TestGraphDeviceTimes(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			ctx, rec := openTraced(t)
			f := newGraphFixture(t, ctx)
			g, err := f.q.Record("timed", func(q *rt.Queue) error {
				return errors.Join(f.step(q, f.x, f.y, 1, 2), f.y.Fill(q, 1), f.step(q, f.y, f.x, 1, 2))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			native := core.GraphNative(cg(g))[0]
			rec.Reset()
			if err := errors.Join(g.Launch(f.q), f.q.Finish()); err != nil {
				t.Fatal(err)
			}
			timed := map[string]int{}
			for _, e := range rec.Events() {
				if e.Kind == trace.TaskComplete && e.Task.DevEnd > e.Task.DevStart && e.Task.DevStart > 0 {
					timed[e.Task.Node.Kind.String()]++
				}
			}
			t.Logf("prepared natively %v: device times by kind %v", native, timed)
			if perCmd, whole := timed["kernel"] == 2 && timed["graph"] == 0, timed["graph"] == 1 && timed["kernel"] == 0; !perCmd && !whole {
				t.Errorf("device times by kind %v: want both kernels' or the graph's", timed)
			}
			if strings.Contains(ctx.Devices()[0].Platform, "Portable Computing Language") {
				want := map[string]int{"kernel": 2, "fill": 1}
				if native {
					want = map[string]int{"graph": 1}
				}
				if !maps.Equal(timed, want) {
					t.Errorf("prepared natively %v: device times by kind %v, want %v", native, timed, want)
				}
			}
		})
	}
}

// TestGraphUpdateInstances updates a generated spec's launch many times:
// the kernel instances that the recording queues of Record and Update
// take go back to the pool, so the context holds as many as one queue
// needs, not one more per update.
func TestGraphUpdateInstances(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	bufs := make([]rt.Buffer[float32], 2)
	for i := range bufs {
		var err error
		if bufs[i], err = rt.NewBuffer[float32](ctx, 16); err != nil {
			t.Fatal(err)
		}
	}
	r := rt.Range1(16)
	var node *rt.GraphNode
	g, err := q.Record("instances", func(q *rt.Queue) error {
		var err error
		node, err = q.Node(func(q *rt.Queue) error { return enqueueBenchStep(q, r, 0, bufs[0], bufs[0], bufs[1]) })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	held := core.Instances(cx(ctx))
	for i := range 20 {
		if err := g.Update(node, func(q *rt.Queue) error { return enqueueBenchStep(q, r, int32(i), bufs[0], bufs[i%2], bufs[1-i%2]) }); err != nil {
			t.Fatal(err)
		}
	}
	if n := core.Instances(cx(ctx)); n > held {
		t.Errorf("%d kernel instances after 20 updates, %d after the recording: the updates' recording queues strand theirs", n, held)
	}
}

// TestGraphLaunchFreeRace frees a buffer that a graph uses while the graph
// launches: the launch succeeds or fails with ErrFreed, and never uses the
// released buffer. Run it with -race.
func TestGraphLaunchFreeRace(t *testing.T) {
	f := newGraphFixture(t, openCPU(t))
	for range 100 {
		b, err := rt.NewBuffer[float32](f.ctx, f.n)
		if err != nil {
			t.Fatal(err)
		}
		g, err := f.q.Record("race", func(q *rt.Queue) error { return f.step(q, f.x, b, 1, 0) })
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var lerr, ferr error
		wg.Add(2)
		go func() { defer wg.Done(); lerr = g.Launch(f.q) }()
		go func() { defer wg.Done(); ferr = b.Free() }()
		wg.Wait()
		if ferr != nil {
			t.Fatalf("Free: %v", ferr)
		}
		if lerr != nil && !errors.Is(lerr, rt.ErrFreed) {
			t.Fatalf("graph launch racing Free: %v, want nil or ErrFreed", lerr)
		}
		if err := errors.Join(f.q.Finish(), g.Release()); err != nil {
			t.Fatal(err)
		}
	}
}
