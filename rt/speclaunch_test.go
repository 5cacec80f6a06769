package rt_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/trace"
)

// Specialization constants per launch: a program whose kernels use LSCALE
// (given per launch or by the context) and LBIAS (the context's only),
// and read device globals, registered by hand as dgen registers them.
// ls_put writes out[i] = i*LSCALE + LBIAS; ls_glob reads the ordinary
// global lsSeen and the image-scope global lsOwn, and adds LSCALE to the
// latter.
const lsImage = `
__kernel void ls_put(__global int *out) {
	int i = get_global_id(0);
	out[i] = i * LSCALE + LBIAS;
}
__kernel void ls_glob(__global int *out, __global int* __dgen_g_lsSeen, __global int* __dgen_g_lsOwn) {
	out[0] = (*__dgen_g_lsSeen) * LSCALE;
	out[1] = (*__dgen_g_lsOwn);
	(*__dgen_g_lsOwn) += LSCALE;
}
`

var (
	lsProg  rt.Program
	lsScale rt.SpecConst[int32]
	lsBias  rt.SpecConst[int32]
	lsSeen  rt.DeviceGlobal[int32]
	lsOwn   rt.DeviceGlobal[int32]

	_lsScale = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&lsScale, 1), ID: pkg + "lsScale", Name: "LSCALE", Default: "1",
		Min: "1", Max: "100", Tune: []string{"2", "3", "4", "5"}})
	_lsBias = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&lsBias, 0), ID: pkg + "lsBias", Name: "LBIAS", Default: "0"})
	_lsSeen = codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&lsSeen), ID: pkg + "lsSeen"})
	_lsOwn  = codegen.Register(&codegen.Global{Var: codegen.GlobalVar(&lsOwn), ID: pkg + "lsOwn", ImageScope: true})
	_lsProg = codegen.Register(&codegen.Program{Var: codegen.ProgramVar(&lsProg), ID: pkg + "lsProg", Name: "ls.cl", Image: lsImage,
		SpecConsts: []*codegen.SpecConst{_lsBias, _lsScale}, Owns: []*codegen.Global{_lsOwn}})
	lsPutKern   = codegen.Register(&codegen.Kernel{ID: pkg + "lsPut", Name: "ls_put", Program: _lsProg, Params: 1, Specs: []*codegen.SpecConst{_lsScale}})
	lsPlainKern = codegen.Register(&codegen.Kernel{ID: pkg + "lsPlain", Name: "ls_put", Program: _lsProg, Params: 1})
	lsGlobKern  = codegen.Register(&codegen.Kernel{ID: pkg + "lsGlob", Name: "ls_glob", Program: _lsProg, Params: 1,
		Globals: []*codegen.Global{_lsSeen, _lsOwn}, Specs: []*codegen.SpecConst{_lsScale}})
)

// The kernel specs, with the Enqueue that dgen generates for them: lsPut
// and lsGlob give LSCALE per launch, lsPlain launches ls_put with the
// context's values.
type (
	lsPut struct {
		Out   rt.Buffer[int32]
		Scale rt.Spec[int32] // dgen:"spec=LSCALE"
	}
	lsPlain struct{ Out rt.Buffer[int32] }
	lsGlob  struct {
		Out   rt.Buffer[int32]
		Scale rt.Spec[int32] // dgen:"spec=LSCALE"
	}
)

func _dgenSpec_lsPut(_dgenS *lsPut) (_dgenA codegen.SpecArgs) {
	codegen.SetSpec[int32](&_dgenA, 0, &lsScale, _dgenS.Scale)
	return
}

func (s *lsPut) Enqueue(q *rt.Queue, r rt.Range) error {
	a := _dgenSpec_lsPut(s)
	k, err := codegen.AcquireSpec(q, lsPutKern, &a)
	if err != nil {
		return err
	}
	codegen.SetBuffer[int32](k, 0, s.Out)
	return codegen.Submit(q, k, r, nil)
}

func (s *lsPlain) Enqueue(q *rt.Queue, r rt.Range) error {
	k, err := codegen.Acquire(q, lsPlainKern)
	if err != nil {
		return err
	}
	codegen.SetBuffer[int32](k, 0, s.Out)
	return codegen.Submit(q, k, r, nil)
}

func (s *lsGlob) Enqueue(q *rt.Queue, r rt.Range) error {
	var a codegen.SpecArgs
	codegen.SetSpec[int32](&a, 0, &lsScale, s.Scale) // as _dgenSpec_lsGlob would
	k, err := codegen.AcquireSpec(q, lsGlobKern, &a)
	if err != nil {
		return err
	}
	codegen.SetBuffer[int32](k, 0, s.Out)
	return codegen.Submit(q, k, r, nil)
}

// lsN is the work-items of an ls_put launch.
const lsN = 64

// lsRun launches ls_put on q into out with scale (the zero Spec: the
// context's), reads the result back and returns the scale and bias it
// shows, or the launch's error.
func lsRun(q *rt.Queue, out rt.Buffer[int32], scale rt.Spec[int32]) (int32, int32, error) {
	if err := (&lsPut{Out: out, Scale: scale}).Enqueue(q, rt.Range1(lsN)); err != nil {
		return 0, 0, err
	}
	return lsRead(q, out)
}

// lsRead reads ls_put's output and returns its scale and bias, or an
// error where it is not i*scale+bias throughout.
func lsRead(q *rt.Queue, out rt.Buffer[int32]) (int32, int32, error) {
	got := make([]int32, lsN)
	if err := out.Read(q, got); err != nil {
		return 0, 0, err
	}
	bias, scale := got[0], got[1]-got[0]
	for i, v := range got {
		if v != int32(i)*scale+bias {
			return 0, 0, fmt.Errorf("out[%d] = %d; not i*%d+%d", i, v, scale, bias)
		}
	}
	return scale, bias, nil
}

func lsBuffer(t testing.TB, ctx *rt.Context) rt.Buffer[int32] {
	t.Helper()
	b, err := rt.NewBuffer[int32](ctx, lsN)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSpecPerLaunch: a launch's own value reaches its kernel and no other
// launch; the zero Spec uses the context's value; Set changes only the
// launches without one; each value builds once (a value that the context
// has already built shares its program); a value outside the bounds, or
// made by another constant's Of, is an error of the call, and nothing is
// launched.
func TestSpecPerLaunch(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	out := lsBuffer(t, ctx)
	builds := func() int64 { s := ctx.Stats().Cache; return s.Builds + s.DiskHits }
	steps := []struct {
		name      string
		set       int32 // Set on the context first; 0 for none
		scale     rt.Spec[int32]
		plain     bool // launch lsPlain instead: the context's values
		want      int32
		newBuilds int64
		err       error
	}{
		{name: "the default", want: 1, newBuilds: 1},
		{name: "own value", scale: lsScale.Of(3), want: 3, newBuilds: 1},
		{name: "own value again", scale: lsScale.Of(3), want: 3},
		{name: "the default again", want: 1},
		{name: "a plain spec shares the variant", plain: true, want: 1},
		{name: "context set", set: 7, want: 7, newBuilds: 1},
		{name: "own value beside the context's", scale: lsScale.Of(3), want: 3},
		{name: "own value equal to the context's", scale: lsScale.Of(7), want: 7},
		{name: "plain under the context's", plain: true, want: 7},
		{name: "at max", scale: lsScale.Of(100), want: 100, newBuilds: 1},
		{name: "above max", scale: lsScale.Of(101), err: rt.ErrOutOfRange},
		{name: "below min", scale: lsScale.Of(0), err: rt.ErrOutOfRange},
		{name: "made by another constant", scale: lsBias.Of(2), err: rt.ErrInvalidArgument},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.set != 0 {
				if err := lsScale.Set(ctx, st.set); err != nil {
					t.Fatal(err)
				}
			}
			if err := out.Write(q, make([]int32, lsN)); err != nil {
				t.Fatal(err)
			}
			before := builds()
			var err error
			if st.plain {
				err = (&lsPlain{Out: out}).Enqueue(q, rt.Range1(lsN))
			} else {
				err = (&lsPut{Out: out, Scale: st.scale}).Enqueue(q, rt.Range1(lsN))
			}
			if st.err != nil {
				got := make([]int32, lsN)
				if rerr := out.Read(q, got); rerr != nil {
					t.Fatal(rerr)
				}
				if !errors.Is(err, st.err) || !strings.Contains(err.Error(), "LSCALE") || got[lsN-1] != 0 {
					t.Errorf("launch = %v, out[%d] = %d; want an error wrapping %v that names LSCALE, nothing launched", err, lsN-1, got[lsN-1], st.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			scale, bias, err := lsRead(q, out)
			if err != nil || scale != st.want || bias != 0 {
				t.Errorf("the kernel ran with LSCALE=%d LBIAS=%d (%v); want LSCALE=%d LBIAS=0", scale, bias, err, st.want)
			}
			if n := builds() - before; n != st.newBuilds {
				t.Errorf("%d programs made; want %d", n, st.newBuilds)
			}
		})
	}
	if v := lsScale.Value(ctx); v != 7 {
		t.Errorf("the context's LSCALE is %d after launches with their own values; want the 7 set", v)
	}
}

// TestSpecPerLaunchAllocs: a launch with its own values whose instance is
// parked allocates nothing, as a plain launch does.
func TestSpecPerLaunchAllocs(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	out := lsBuffer(t, ctx)
	for _, tt := range []struct {
		name   string
		launch func() error
	}{
		{"plain", func() error { return (&lsPlain{Out: out}).Enqueue(q, rt.Range1(lsN)) }},
		{"own value", func() error { return (&lsPut{Out: out, Scale: lsScale.Of(3)}).Enqueue(q, rt.Range1(lsN)) }},
		{"zero Spec", func() error { return (&lsPut{Out: out}).Enqueue(q, rt.Range1(lsN)) }},
	} {
		if err := tt.launch(); err != nil { // build, park
			t.Fatal(err)
		}
		var err error
		n := testing.AllocsPerRun(200, func() {
			if e := tt.launch(); e != nil {
				err = e
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %v allocations a launch; want 0", tt.name, n)
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
}

// lsMix is what specMix counts.
type lsMix struct {
	launches, wrong atomic.Int64
	firstWrong      atomic.Pointer[string]
}

func (m *lsMix) fail(format string, args ...any) {
	m.wrong.Add(1)
	s := fmt.Sprintf(format, args...)
	m.firstWrong.CompareAndSwap(nil, &s)
}

// ctxValues is the history of the context's LSCALE: the values set, in
// order, each recorded before its Set is called and after the Set before
// it returned.
type ctxValues struct {
	mu   sync.Mutex
	vals []int32
}

// set records v as the context's value from the Set that follows on.
func (h *ctxValues) set(v int32) {
	h.mu.Lock()
	h.vals = append(h.vals, v)
	h.mu.Unlock()
}

// now returns the number of values so far, for since.
func (h *ctxValues) now() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.vals)
}

// since returns the values that a launch begun when now returned n may see:
// the context's value then, which is the last recorded or, while its Set
// has not returned, the one before, and every later one.
func (h *ctxValues) since(n int) []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.vals[max(0, n-2):])
}

// specMix runs g goroutines on ctx until stop is closed, goroutine i on
// queue qs[i%len(qs)], each launch with values[(i+n)%len(values)] (n its
// launch number), the zero Spec meaning the context's value, which must be
// one that hist had when the launch began or a later one. Every result is
// read back and checked into m.
func specMix(ctx *rt.Context, qs []*rt.Queue, g int, values []rt.Spec[int32], hist *ctxValues, stop <-chan struct{}, m *lsMix) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := qs[i%len(qs)]
			out, err := rt.NewBuffer[int32](ctx, lsN)
			if err != nil {
				m.fail("goroutine %d: %v", i, err)
				return
			}
			defer out.Free()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				v := values[(i+n)%len(values)]
				own, isOwn := v.Get()
				began := hist.now()
				scale, bias, err := lsRun(q, out, v)
				m.launches.Add(1)
				switch {
				case err != nil:
					m.fail("goroutine %d, launch %d: %v", i, n, err)
				case isOwn && scale != own, bias != 0:
					m.fail("goroutine %d, launch %d with its own LSCALE=%d: the kernel ran with LSCALE=%d LBIAS=%d", i, n, own, scale, bias)
				case !isOwn && !slices.Contains(hist.since(began), scale):
					m.fail("goroutine %d, launch %d without a value: the kernel ran with LSCALE=%d; the context's values since it began: %v", i, n, scale, hist.since(began))
				}
			}
		}()
	}
	return &wg
}

// TestSpecGoroutines: 16 goroutines on one context (two to a queue), each
// launch with one of 4 values of LSCALE in turn or without one, while
// another goroutine changes the context's value every 50 ms: every result
// is the launch's own value, or for a launch without one the context's
// value when the launch began or a later one. 0 wrong.
func TestSpecGoroutines(t *testing.T) {
	ctx := openCPU(t)
	qs := make([]*rt.Queue, 8)
	for i := range qs {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		qs[i] = q
	}
	values := []rt.Spec[int32]{lsScale.Of(2), lsScale.Of(3), lsScale.Of(5), lsScale.Of(7), {}}
	out := lsBuffer(t, ctx)
	for _, v := range values { // build every variant first: the run is about launches
		if _, _, err := lsRun(qs[0], out, v); err != nil {
			t.Fatal(err)
		}
	}
	hist := &ctxValues{vals: []int32{1}}
	stop := make(chan struct{})
	var m lsMix
	wg := specMix(ctx, qs, 16, values, hist, stop, &m)
	sets := 0
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); sets++ {
		v := []int32{7, 2, 5, 1, 3}[sets%5] // variants built above
		hist.set(v)
		if err := lsScale.Set(ctx, v); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d launches by 16 goroutines, %d changes of the context's value, %d wrong", m.launches.Load(), sets, m.wrong.Load())
	if m.wrong.Load() != 0 {
		t.Errorf("%d wrong results; the first: %s", m.wrong.Load(), *m.firstWrong.Load())
	}
	if m.launches.Load() < 16 {
		t.Errorf("%d launches: the goroutines did not run", m.launches.Load())
	}
}

// TestSpecTuneBeside: while Tune times LSCALE's candidates on q, other
// goroutines launching on q and on queues of their own, with their own
// values and without, see their own values and the context's; the tuning
// function's launches see the candidate, whether they give it or leave
// the field zero; the context's value changes only with TuneDefault.
func TestSpecTuneBeside(t *testing.T) {
	var warn bytes.Buffer
	ctx, _ := openTune(t, t.TempDir(), "", &warn, true)
	q := ctx.Queue()
	q2, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	values := []rt.Spec[int32]{lsScale.Of(3), {}, lsScale.Of(9), {}}
	tuneOut := lsBuffer(t, ctx)
	var runs, tuneWrong atomic.Int64
	run := func(q *rt.Queue, v int32) error {
		n := runs.Add(1)
		scale := rt.Spec[int32]{}
		if n%2 == 0 {
			scale = lsScale.Of(v)
		}
		got, _, err := lsRun(q, tuneOut, scale)
		if err != nil {
			return err
		}
		if got != v {
			tuneWrong.Add(1)
			return fmt.Errorf("the tuning function's launch ran with LSCALE=%d while Tune timed %d", got, v)
		}
		return nil
	}
	stop := make(chan struct{})
	var m lsMix
	wg := specMix(ctx, []*rt.Queue{q, q2}, 6, values, &ctxValues{vals: []int32{1}}, stop, &m)
	winner, err := lsScale.Tune(q, run)
	tuned := ctx.Stats().Cache.Tuned
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if winner < 2 || winner > 5 || tuned != 4 || tuneWrong.Load() != 0 {
		t.Errorf("Tune = %d with %d candidates timed, %d wrong launches of the tuning function; want one of 2..5, 4 timed, 0 wrong", winner, tuned, tuneWrong.Load())
	}
	t.Logf("%d launches beside Tune (%d runs of its function), %d wrong", m.launches.Load(), runs.Load(), m.wrong.Load())
	if m.wrong.Load() != 0 {
		t.Errorf("%d wrong results beside Tune; the first: %s", m.wrong.Load(), *m.firstWrong.Load())
	}
	if v := lsScale.Value(ctx); v != 1 {
		t.Errorf("the context's LSCALE is %d after Tune; want the default 1", v)
	}
	got, err := lsScale.TuneDefault(q, run)
	if err != nil || got < 2 || got > 5 || lsScale.Value(ctx) != got {
		t.Errorf("TuneDefault = %d, %v; the context's LSCALE %d; want the winner, set", got, err, lsScale.Value(ctx))
	}
	if s, _, err := lsRun(q, tuneOut, rt.Spec[int32]{}); err != nil || s != got {
		t.Errorf("a launch without a value after TuneDefault ran with LSCALE=%d (%v); want %d", s, err, got)
	}
}

// TestSpecTuneMisuse: a tuning function that launches another value than
// the candidate, or launches nowhere on the queue it is given, fails every
// candidate with an error that says so; the context keeps its value.
func TestSpecTuneMisuse(t *testing.T) {
	var warn bytes.Buffer
	ctx, _ := openTune(t, t.TempDir(), "", &warn, true)
	q := ctx.Queue()
	out := lsBuffer(t, ctx)
	for _, tt := range []struct {
		name string
		run  func(*rt.Queue, int32) error
		want string
	}{
		{"another value", func(tq *rt.Queue, v int32) error {
			_, _, err := lsRun(tq, out, lsScale.Of(v+10))
			return err
		}, "while it times LSCALE="},
		{"the outer queue", func(_ *rt.Queue, v int32) error {
			_, _, err := lsRun(q, out, rt.Spec[int32]{})
			return err
		}, "launched no kernel whose program uses LSCALE"},
		{"a nested tuning", func(tq *rt.Queue, v int32) error {
			_, err := lsScale.Tune(tq, func(*rt.Queue, int32) error { return nil })
			return err
		}, "tunings do not nest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lsScale.Tune(q, tt.run)
			if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Tune = %v; want ErrInvalidArgument saying %q", err, tt.want)
			}
			if v := lsScale.Value(ctx); v != 1 {
				t.Errorf("the context's LSCALE is %d; want the default 1", v)
			}
		})
	}
}

// TestSpecGraph: a graph records each launch's values, its own or the
// context's as they were when it recorded; a Set afterwards changes no
// recorded launch; an update may change a launch's arguments but not its
// values.
func TestSpecGraph(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	outs := []rt.Buffer[int32]{lsBuffer(t, ctx), lsBuffer(t, ctx), lsBuffer(t, ctx), lsBuffer(t, ctx)}
	var node *rt.GraphNode
	g, err := q.Record("values", func(rq *rt.Queue) error {
		var err error
		node, err = rq.Node(func(rq *rt.Queue) error {
			return (&lsPut{Out: outs[0], Scale: lsScale.Of(3)}).Enqueue(rq, rt.Range1(lsN))
		})
		if err != nil {
			return err
		}
		if err := (&lsPut{Out: outs[1], Scale: lsScale.Of(4)}).Enqueue(rq, rt.Range1(lsN)); err != nil {
			return err
		}
		return (&lsPlain{Out: outs[2]}).Enqueue(rq, rt.Range1(lsN))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if err := lsScale.Set(ctx, 9); err != nil {
		t.Fatal(err)
	}
	check := func(when string, want ...int32) {
		t.Helper()
		if err := g.Launch(q); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if s, _, err := lsRead(q, outs[i]); err != nil || s != w {
				t.Errorf("%s: launch %d ran with LSCALE=%d (%v); want %d", when, i, s, err, w)
			}
		}
	}
	check("after Set", 3, 4, 1)
	err = g.Update(node, func(rq *rt.Queue) error {
		return (&lsPut{Out: outs[0], Scale: lsScale.Of(5)}).Enqueue(rq, rt.Range1(lsN))
	})
	if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "LSCALE=5") || !strings.Contains(err.Error(), "LSCALE=3") {
		t.Errorf("an update to another value: %v; want ErrInvalidArgument naming both", err)
	}
	err = g.Update(node, func(rq *rt.Queue) error {
		return (&lsPut{Out: outs[3], Scale: lsScale.Of(3)}).Enqueue(rq, rt.Range1(lsN))
	})
	if err != nil {
		t.Fatalf("an update to another buffer under the same value: %v", err)
	}
	check("after an update", 3, 4, 1, 3)
}

// TestSpecGlobals: device globals belong to the program, not to a variant
// of it: a value written by the host or by a launch under one set of
// values is what a launch under another reads, for an ordinary global (one
// per device) and an image-scope one (one per program image and device).
func TestSpecGlobals(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	out, err := rt.NewBuffer[int32](ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := lsSeen.Write(q, 10); err != nil {
		t.Fatal(err)
	}
	own := int32(0)
	for i, scale := range []int32{2, 3, 2, 1} {
		v := lsScale.Of(scale)
		if scale == 1 {
			v = rt.Spec[int32]{} // the context's: the default 1
		}
		if err := (&lsGlob{Out: out, Scale: v}).Enqueue(q, rt.Range1(1)); err != nil {
			t.Fatal(err)
		}
		got := make([]int32, 2)
		if err := out.Read(q, got); err != nil {
			t.Fatal(err)
		}
		if got[0] != 10*scale || got[1] != own {
			t.Errorf("launch %d under LSCALE=%d read lsSeen*LSCALE=%d and lsOwn=%d; want %d and %d (what the host and the launches before wrote)", i, scale, got[0], got[1], 10*scale, own)
		}
		own += scale
	}
	if v, err := lsOwn.Read(q); err != nil || v != own {
		t.Errorf("lsOwn = %d, %v after launches under three sets of values; want %d", v, err, own)
	}
}

// TestSpecTrace: a traced launch is named after its kernel and the values
// of its program's variant, its own or the context's.
func TestSpecTrace(t *testing.T) {
	tr := trace.New()
	rec := &trace.Recorder{}
	tr.Subscribe(rec)
	ctx := openCPUConfig(t, rt.Config{Tracer: tr})
	q := ctx.Queue()
	out := lsBuffer(t, ctx)
	if _, _, err := lsRun(q, out, lsScale.Of(3)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lsRun(q, out, rt.Spec[int32]{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range rec.Events() {
		if e.Kind == trace.TaskBegin && e.Task.Node.Kind == trace.Kernel {
			names = append(names, e.Task.Node.Name)
		}
	}
	if want := []string{"ls_put[LBIAS=0,LSCALE=3]", "ls_put[LBIAS=0,LSCALE=1]"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("traced kernel launches %q; want %q", names, want)
	}
}

// TestSpecDiskCache: the persistent cache keeps one entry per variant,
// keyed by every value the image uses (what dgen cache ls shows).
func TestSpecDiskCache(t *testing.T) {
	cc := defaultCacheConfig()
	dir := t.TempDir()
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(dir))
	ctx := openCPUConfig(t, rt.Config{Cache: &cc})
	q := ctx.Queue()
	out := lsBuffer(t, ctx)
	for _, v := range []rt.Spec[int32]{lsScale.Of(3), lsScale.Of(4), {}} {
		if _, _, err := lsRun(q, out, v); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := cx(ctx).PersistentCache().List()
	if err != nil {
		t.Fatal(err)
	}
	var specs []string
	for _, e := range ents {
		if e.ImageID == pkg+"lsProg" {
			specs = append(specs, fmt.Sprintf("%q", e.SpecConsts))
		}
	}
	if len(specs) != 3 || !strings.Contains(strings.Join(specs, " "), `LSCALE\x013`) || !strings.Contains(strings.Join(specs, " "), `LSCALE\x014`) {
		t.Errorf("disk cache entries of the program: %v; want three, LSCALE=3 and LSCALE=4 among them", specs)
	}
}

// BenchmarkSpecLaunch compares a launch that gives its own value, whose
// instance is parked, with a plain launch of the same kernel: bench/inproc
// runs the same comparison in alternating blocks.
func BenchmarkSpecLaunch(b *testing.B) {
	ctx := openCPU(b)
	q := ctx.Queue()
	out := lsBuffer(b, ctx)
	for _, bb := range []struct {
		name   string
		launch func() error
	}{
		{"plain", func() error { return (&lsPlain{Out: out}).Enqueue(q, rt.Range1(lsN)) }},
		{"own", func() error { return (&lsPut{Out: out, Scale: lsScale.Of(3)}).Enqueue(q, rt.Range1(lsN)) }},
		{"own-alternating", func() func() error {
			n := 0
			return func() error {
				n++
				return (&lsPut{Out: out, Scale: lsScale.Of(int32(3 + n%2))}).Enqueue(q, rt.Range1(lsN))
			}
		}()},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for range 2 {
				if err := bb.launch(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := bb.launch(); err != nil {
					b.Fatal(err)
				}
			}
			if err := q.Finish(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
