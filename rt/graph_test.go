package rt_test

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
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
// environment, for the contexts that the test opens next: their graphs
// replay as loops of prepared commands.
func loopGraphs(t testing.TB) {
	t.Setenv("DGEN_OPENCL_COMMAND_BUFFER", "0")
	t.Setenv("DGEN_CUDA_GRAPH", "0")
}

// checkNative checks how g was prepared: never as the device API's own
// graph object in mode "loop"; as PoCL's command buffer in mode
// "command-buffer" on PoCL (which has cl_khr_command_buffer).
func checkNative(t *testing.T, ctx *rt.Context, g *rt.Graph, mode string) {
	t.Helper()
	native := rt.GraphNative(g)
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

func newGraphFixture(t *testing.T, ctx *rt.Context) *graphFixture {
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
	err := errors.Join(f.k.SetBuffer(0, x.Mem()), f.k.SetBuffer(1, y.Mem()), raw.SetArg(f.k, 2, a), raw.SetArg(f.k, 3, b), raw.SetArg(f.k, 4, int32(f.n)))
	if err != nil {
		return err
	}
	return raw.Submit(q, f.k, rt.Range1(f.n))
}

// body enqueues the commands the replay tests record: a write, a fill, a
// ping-pong pair of steps, and a copy.
func (f *graphFixture) body(q *rt.Queue, init []float32) error {
	if err := f.x.Write(q, init); err != nil {
		return err
	}
	if _, err := f.y.Fill(q, 7); err != nil {
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
	_, err := f.x.CopyTo(q, f.y)
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
			if err := f.body(f.q, init); err != nil {
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
				if err := f.body(q, init); err != nil {
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
				if err := f.y.Write(f.q, make([]float32, f.n)); err != nil {
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
			g, err := f.q.Record("update", func(q *rt.Queue) error {
				if err := f.step(q, f.x, f.y, 2, 1); err != nil {
					return err
				}
				if _, err := f.y.Fill(q, 0); err != nil { // command 1: not a launch
					return err
				}
				return f.step(q, f.x, f.y, 2, 1)
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
			if err := g.Update(2, func(q *rt.Queue) error { return f.step(q, f.y, f.x, 4, 0) }); err != nil {
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
			bad := []struct {
				name string
				cmd  int
				fn   func(q *rt.Queue) error
				want string
			}{
				{"out of range", 3, func(q *rt.Queue) error { return nil }, "the graph has 3 commands"},
				{"not a launch", 1, func(q *rt.Queue) error { return nil }, "only kernel launches"},
				{"no launch", 0, func(q *rt.Queue) error { return nil }, "enqueued 0 kernel launches"},
				{"two launches", 0, func(q *rt.Queue) error {
					return errors.Join(f.step(q, f.x, f.y, 1, 1), f.step(q, f.x, f.y, 1, 1))
				}, "enqueued 2 kernel launches"},
				{"wrong type", 0, func(q *rt.Queue) error {
					err := errors.Join(f.k.SetBuffer(0, f.x.Mem()), f.k.SetBuffer(1, f.y.Mem()), f.k.SetBuffer(2, f.y.Mem()), raw.SetArg(f.k, 3, float32(1)), raw.SetArg(f.k, 4, int32(f.n)))
					return errors.Join(err, raw.Submit(q, f.k, rt.Range1(f.n)))
				}, "argument 2: invalid argument: a buffer where the command has a value of 4 bytes"},
				{"another kernel", 0, func(q *rt.Queue) error {
					err := errors.Join(raw.SetArg(other, 0, float32(1)), other.SetBuffer(1, f.x.Mem()), other.SetBuffer(2, f.y.Mem()), raw.SetArg(other, 3, int32(1)))
					return errors.Join(err, raw.Submit(q, other, rt.Range1(1)))
				}, `launches kernel "saxpy"`},
				{"a write", 0, func(q *rt.Queue) error { return f.x.Write(q, ones) }, "not a write buffer"},
			}
			for _, tc := range bad {
				err := g.Update(tc.cmd, tc.fn)
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
		if err := errors.Join(f.k.SetBuffer(0, f.x.Mem()), f.k.SetBuffer(1, f.y.Mem()), raw.SetArg(f.k, 2, float32(1)), raw.SetArg(f.k, 3, float32(1)), raw.SetArg(f.k, 4, int32(f.n))); err != nil {
			return err
		}
		if _, err := raw.Launch(q, f.k, rt.Range1(f.n)); err == nil || !strings.Contains(err.Error(), "no event") {
			t.Errorf("recorded launch with an event: %v", err)
		}
		// Another goroutine may not enqueue on the recording queue.
		var wg sync.WaitGroup
		var otherErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			otherErr = f.step(q, f.x, f.y, 1, 2)
		}()
		wg.Wait()
		if otherErr == nil || !strings.Contains(otherErr.Error(), `recording graph "bad" in another goroutine`) {
			t.Errorf("enqueue from another goroutine: %v", otherErr)
		}
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
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
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

// TestGraphTrace checks that a traced graph launch is one range with its
// commands inside it, at the lines that recorded them.
func TestGraphTrace(t *testing.T) {
	ctx, rec := openTraced(t)
	f := newGraphFixture(t, ctx)
	var file string
	var line int
	g, err := f.q.Record("traced", func(q *rt.Queue) error {
		_, file, line, _ = runtime.Caller(0)
		if err := f.step(q, f.x, f.y, 1, 2); err != nil { // the step's Submit is in step, one frame down
			return err
		}
		_, err := f.y.Fill(q, 1) // line+4
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	rec.Reset()
	if err := g.Launch(f.q); err != nil {
		t.Fatal(err)
	}
	var rng *trace.Event
	var tasks []trace.Event
	for _, e := range rec.Events() {
		switch e.Kind {
		case trace.UserRange:
			if e.Name == "graph traced" {
				rng = &e
			}
		case trace.TaskBegin:
			tasks = append(tasks, e)
		}
	}
	if rng == nil {
		t.Fatal("no range for the graph launch")
	}
	if len(tasks) != 2 {
		t.Fatalf("%d tasks, want 2", len(tasks))
	}
	for _, tk := range tasks {
		if tk.Task.HostBegin < rng.Begin || tk.Task.HostBegin > rng.Time {
			t.Errorf("task %s outside the range", tk.Task.Node.Name)
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
		if err := errors.Join(released(in.Fill(r.qb, 1)), r.qb.Finish()); err != nil {
			t.Fatal(err)
		}
		g, err := r.qa.Record("slow", func(q *rt.Queue) error {
			return errors.Join(r.slowSum.SetBuffer(0, in.Mem()), r.slowSum.SetBuffer(1, sum.Mem()), raw.SetArg(r.slowSum, 2, int32(iters)), raw.Submit(q, r.slowSum, rt.Range1(n)))
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
		if err := errors.Join(r.set.SetBuffer(0, reused.Mem()), raw.SetArg(r.set, 1, float32(2)), raw.Submit(r.qb, r.set, rt.Range1(n)), r.qb.Flush()); err != nil {
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

// TestGraphConfigEnv: DGEN_OPENCL_COMMAND_BUFFER and DGEN_CUDA_GRAPH,
// read by rt when a context opens, choose how graphs are prepared; a
// malformed value fails Open naming the variable.
func TestGraphConfigEnv(t *testing.T) {
	tests := []struct {
		cb, cu string
		mode   string // for checkNative; "" for an error
		err    string
	}{
		{"", "", "command-buffer", ""},
		{"1", "yes", "command-buffer", ""},
		{"0", "0", "loop", ""},
		{"off", "no", "loop", ""},
		{"", "0", "command-buffer", ""}, // the CUDA switch leaves PoCL's command buffers on
		{"sometimes", "", "", `DGEN_OPENCL_COMMAND_BUFFER="sometimes": want 1`},
		{"", "2", "", `DGEN_CUDA_GRAPH="2": want 1`},
	}
	for _, tt := range tests {
		t.Run(tt.cb+","+tt.cu, func(t *testing.T) {
			t.Setenv("DGEN_OPENCL_COMMAND_BUFFER", tt.cb)
			t.Setenv("DGEN_CUDA_GRAPH", tt.cu)
			if tt.err != "" {
				ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
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
