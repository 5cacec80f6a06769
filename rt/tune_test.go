package rt_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/fleetcache/fleettest"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/trace"
)

// A program whose kernel repeats its work REPS times: the fewer, the
// faster. REPS=3 does not compile, and DEAD never does.
var (
	repsProg  rt.Program
	repsConst rt.SpecConst[int32]
	deadConst rt.SpecConst[int32]
	noneConst rt.SpecConst[int32]

	_repsConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&repsConst, 16), ID: pkg + "repsConst", Name: "REPS", Default: "16",
		Min: "1", Max: "256", Tune: []string{"256", "3", "1", "16"}}
	_deadConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&deadConst, 1), ID: pkg + "deadConst", Name: "DEAD", Default: "1",
		Tune: []string{"1", "2"}}
	_noneConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&noneConst, 1), ID: pkg + "noneConst", Name: "NONE", Default: "1"}
	_repsProg  = &codegen.Program{Var: codegen.ProgramVar(&repsProg), ID: pkg + "repsProg", Name: "repsProg", Image: `
#if REPS == 3
#error REPS=3 is refused
#endif
#ifdef DEAD_USED
#error never
#endif
__kernel void reps(__global float *out, int n) {
	size_t i = get_global_id(0);
	float x = out[i];
	for (int r = 0; r < REPS * 64; r++)
		x = x * 0.999f + 0.5f;
	out[i] = x;
}
`, SpecConsts: []*codegen.SpecConst{_repsConst}}
	repsKern  = &codegen.Kernel{ID: pkg + "Reps", Name: "reps", Program: _repsProg, Params: 2}
	_deadProg = &codegen.Program{Var: codegen.ProgramVar(new(rt.Program)), ID: pkg + "deadProg", Name: "deadProg",
		Image: "#error DEAD is never built\n__kernel void dead(__global float *out, int n) { }\n", SpecConsts: []*codegen.SpecConst{_deadConst}}
	deadKern = &codegen.Kernel{ID: pkg + "Dead", Name: "dead", Program: _deadProg, Params: 2}
	_        = codegen.Register(_repsConst)
	_        = codegen.Register(_deadConst)
	_        = codegen.Register(_noneConst)
	_        = codegen.Register(_repsProg)
	_        = codegen.Register(repsKern)
	_        = codegen.Register(_deadProg)
	_        = codegen.Register(deadKern)
)

// openTune opens a profiling context on the CPU device (or DGEN_DEVICE)
// with the persistent cache in dir, remote the remote tier's URL (or
// none), warnings into warn, Config.Retune set to retune and a trace
// recorder.
func openTune(t *testing.T, dir, remote string, warn *bytes.Buffer, retune bool) (*rt.Context, *trace.Recorder) {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(dir))
	if remote != "" {
		cc.Remote.URL, cc.Remote.Key = remote, "fleet key"
	}
	tr := trace.New()
	rec := &trace.Recorder{}
	tr.Subscribe(rec)
	sel := os.Getenv("DGEN_DEVICE")
	if sel == "" {
		sel = "cpu"
	}
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: sel, Profiling: true, Retune: retune, Cache: &cc, Tracer: tr, Logger: slog.New(slog.NewTextHandler(warn, nil))}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx, rec
}

// runReps returns a tuning function that launches k over n items, giving
// the constant no value of its own: the tuning queue's candidate applies.
//
// On a GPU it launches 1<<20 work-items, not 4096: at 4096 the time
// between the two markers is mostly the launch's own (on an H100, 2026-11-27:
// REPS=1 13.8 µs, REPS=16 11.8 µs, REPS=256 42 µs), so that REPS=1 and
// REPS=16 swapped places in one run of six; at 1<<20, 42 runs of 42 (21 on
// each backend) kept them apart.
func runReps(t *testing.T, ctx *rt.Context, k *codegen.Kernel, runs *int) func(*rt.Queue, int32) error {
	n := 4096
	if ctx.Devices()[0].Type == rt.DeviceGPU {
		n = 1 << 20
	}
	out, err := rt.NewBuffer[float32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return func(q *rt.Queue, _ int32) error {
		*runs++
		kern, err := codegen.Acquire(q, k)
		if err != nil {
			return err
		}
		codegen.SetBuffer(kern, 0, out)
		codegen.SetScalar(kern, 1, int32(n))
		return codegen.Submit(q, kern, rt.Range1(n), nil)
	}
}

// TestTune tunes REPS: the failing candidate 3 is skipped and reported,
// the winner is returned and recorded, and the context's value stays the
// default; a second context on the same cache directory times nothing,
// and Config.Retune times again. (DGEN_TUNE
// fills Config.Retune where the Config leaves it false: TestTuneEnv.)
func TestTune(t *testing.T) {
	dir := t.TempDir()
	var warn bytes.Buffer
	t.Setenv("DGEN_RETUNE", "")
	for i, want := range []struct {
		retune bool
		cached bool
		timed  int
	}{
		{false, false, 3},
		{false, true, 0},
		{true, false, 3},
	} {
		ctx, rec := openTune(t, dir, "", &warn, want.retune)
		runs := 0
		res, err := tuneFull(context.Background(), ctx.Queue(), &repsConst, runReps(t, ctx, repsKern, &runs))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.Value != 1 || repsConst.Value(ctx) != 16 || res.Cached != want.cached || res.Timed != want.timed {
			t.Errorf("run %d: %+v, value on the context %d; want winner 1, the default 16 on the context, cached %v, %d timed", i, res, repsConst.Value(ctx), want.cached, want.timed)
		}
		if len(res.Errs) != 4 || res.Errs[1] == nil || (!want.cached && !errors.Is(res.Errs[1], rt.ErrBuildFailed)) {
			t.Errorf("run %d: errors %v; want candidate 3's build failure", i, res.Errs)
		}
		if want.cached && runs != 0 {
			t.Errorf("run %d: the tuning function ran %d times from a record", i, runs)
		}
		if s := ctx.Stats().Cache; s.Tuned != int64(want.timed) || (s.TuneRecords == 1) != want.cached {
			t.Errorf("run %d: stats tuned %d, records %d", i, s.Tuned, s.TuneRecords)
		}
		if !want.cached {
			var marks []string
			ranges := 0
			for _, e := range rec.Events() {
				switch {
				case e.Kind == trace.UserMark:
					marks = append(marks, e.Name)
				case e.Kind == trace.UserRange && strings.HasPrefix(e.Name, "tune "):
					ranges++
				}
			}
			if ranges != 1 || len(marks) != 4 || !strings.Contains(marks[2], "REPS=1: ") || !strings.Contains(marks[1], "REPS=3 skipped") {
				t.Errorf("run %d: %d tuning ranges, marks %q", i, ranges, marks)
			}
		}
		ctx.Close()
	}
	if n := strings.Count(warn.String(), "candidate REPS=3 skipped"); n != 2 {
		t.Errorf("%d warnings of the skipped candidate; want one per tuning that timed:\n%s", n, warn.String())
	}
}

// TestTuneEnv: DGEN_TUNE sets Config.Retune in ConfigFromEnv, and a value
// that is neither force nor a boolean is an error that names it.
func TestTuneEnv(t *testing.T) {
	for _, tt := range []struct {
		v      string
		retune bool
		ok     bool
	}{
		{"", false, true}, {"force", true, true}, {"FORCE", true, true}, {"1", true, true},
		{"0", false, true}, {"false", false, true}, {"forced", false, false},
	} {
		cfg, err := rt.ConfigFromEnv(func(name string) string {
			if name == "DGEN_TUNE" {
				return tt.v
			}
			return ""
		})
		switch {
		case !tt.ok && (err == nil || !strings.Contains(err.Error(), "DGEN_TUNE")):
			t.Errorf("DGEN_TUNE=%q: %v; want an error naming DGEN_TUNE", tt.v, err)
		case tt.ok && (err != nil || cfg.Retune != tt.retune):
			t.Errorf("DGEN_TUNE=%q: Retune %v, %v; want %v", tt.v, cfg.Retune, err, tt.retune)
		}
	}
}

// TestTuneContext: a context done before Tune, or while it times, stops
// it with an error wrapping ctx.Err(); no further candidate is timed, the
// value set before stays and nothing is recorded.
func TestTuneContext(t *testing.T) {
	var warn bytes.Buffer
	dir := t.TempDir()
	ctx, _ := openTune(t, dir, "", &warn, false)
	q := ctx.Queue()
	if err := repsConst.Set(ctx, 256); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		cancelAt int // the run of the tuning function that cancels; 0: before Tune
	}{
		{"cancelled before", 0},
		{"cancelled in the first warm-up", 1},
		{"cancelled while sampling", 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelAt == 0 {
				cancel()
			}
			runs, after := 0, 0
			inner := runReps(t, ctx, repsKern, &runs)
			res, err := tuneFull(tctx, q, &repsConst, func(q *rt.Queue, v int32) error {
				if tctx.Err() != nil {
					after++
				}
				if runs+1 == tt.cancelAt {
					cancel()
				}
				return inner(q, v)
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%+v, %v; want an error wrapping context.Canceled", res, err)
			}
			if after > 0 || (tt.cancelAt == 0 && runs != 0) {
				t.Errorf("the tuning function ran %d times after the cancellation (%d in all)", after, runs)
			}
			if v := repsConst.Value(ctx); v != 256 {
				t.Errorf("after a cancelled tuning the value is %d; want the 256 set before", v)
			}
			if _, ok, _ := cx(ctx).PersistentCache().Get(tuneRecordKey(q, &repsConst)); ok {
				t.Error("a cancelled tuning left a record")
			}
		})
	}
}

// TestTuneBadInput: no candidates, a queue that does not profile (where
// there is no record), and a tuning function that fails for every
// candidate (the value set before stays) are errors; nothing is recorded
// for the last.
func TestTuneBadInput(t *testing.T) {
	var warn bytes.Buffer
	ctx, _ := openTune(t, t.TempDir(), "", &warn, false)
	q := ctx.Queue()
	runs := 0
	if _, err := tuneFull(context.Background(), q, &noneConst, runReps(t, ctx, repsKern, &runs)); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("no candidates: %v; want ErrInvalidArgument", err)
	}
	if _, err := tuneFull(context.Background(), q, &repsConst, nil); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("nil function: %v; want ErrInvalidArgument", err)
	}
	plain, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testenv.Device()}))
	if err == nil {
		defer plain.Close()
		_, err := tuneFull(context.Background(), plain.Queue(), &repsConst, func(*rt.Queue, int32) error { return nil })
		if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "Config.Profiling") || !strings.Contains(err.Error(), "DGEN_PROFILE") {
			t.Errorf("queue without profiling: %v; want ErrInvalidArgument naming Config.Profiling and DGEN_PROFILE", err)
		}
	}
	if err := deadConst.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	res, err := tuneFull(context.Background(), q, &deadConst, runReps(t, ctx, deadKern, &runs))
	if !errors.Is(err, rt.ErrBuildFailed) || res.Timed != 0 {
		t.Errorf("every candidate fails: %v, %+v; want the joined build errors", err, res)
	}
	if v := deadConst.Value(ctx); v != 2 {
		t.Errorf("after a failed tuning the value is %d; want the 2 set before", v)
	}
	if _, ok, _ := cx(ctx).PersistentCache().Get(tuneRecordKey(q, &deadConst)); ok {
		t.Error("a failed tuning left a record")
	}
}

// TestTuneForgedRecord: a record that does not decode, or names a value
// that is not a candidate, is reported and tuned again; it never sets its
// value.
func TestTuneForgedRecord(t *testing.T) {
	for _, rec := range []string{
		`not json`,
		`{"v":1,"const":"` + pkg + `repsConst","winner":"7"}`,
		`{"v":1,"const":"` + pkg + `repsConst","winner":"3"}`, // a candidate, but declared min=1: still one of the list, so it must fail to build
		`{"v":1,"const":"another","winner":"1"}`,
	} {
		var warn bytes.Buffer
		ctx, _ := openTune(t, t.TempDir(), "", &warn, false)
		q := ctx.Queue()
		if err := cx(ctx).PersistentCache().Put(tuneRecordKey(q, &repsConst), []byte(rec)); err != nil {
			t.Fatal(err)
		}
		runs := 0
		res, err := tuneFull(context.Background(), q, &repsConst, runReps(t, ctx, repsKern, &runs))
		if rec == `{"v":1,"const":"`+pkg+`repsConst","winner":"3"}` {
			// A forged record may name a candidate: the value is one the
			// program declared, and its failure shows at the launch.
			if err != nil || !res.Cached || res.Value != 3 {
				t.Errorf("record %s: %+v, %v", rec, res, err)
			}
			continue
		}
		// The new tuning's winner is whichever candidate that builds runs
		// fastest: on a GPU, the kernel's reps are all within its noise.
		if err != nil || res.Cached || res.Value == 3 || !strings.Contains(warn.String(), "tuning record") {
			t.Errorf("record %s: %+v, %v, warnings %q; want a warning and a new tuning", rec, res, err, warn.String())
		}
	}
}

// TestTuneRecordWithoutProfiling: a context that does not profile sets the
// winner of a tuning record, which a profiling one made, and times
// nothing.
func TestTuneRecordWithoutProfiling(t *testing.T) {
	dir := t.TempDir()
	var warn bytes.Buffer
	ctx, _ := openTune(t, dir, "", &warn, false)
	runs := 0
	if _, err := repsConst.Tune(ctx.Queue(), runReps(t, ctx, repsKern, &runs)); err != nil {
		t.Fatal(err)
	}
	ctx.Close()
	cc := defaultCacheConfig()
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(dir))
	sel := os.Getenv("DGEN_DEVICE")
	if sel == "" {
		sel = "cpu"
	}
	plain, err := rt.OpenConfig(withEnv(t, rt.Config{Device: sel, Cache: &cc}))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	runs = 0
	res, err := tuneFull(context.Background(), plain.Queue(), &repsConst, runReps(t, plain, repsKern, &runs))
	if err != nil || !res.Cached || res.Value != 1 || runs != 0 {
		t.Errorf("%+v, %v after %d runs; want the record's winner 1, timing nothing", res, err, runs)
	}
	if v, err := repsConst.TuneDefault(plain.Queue(), runReps(t, plain, repsKern, &runs)); err != nil || v != 1 || repsConst.Value(plain) != 1 || runs != 0 {
		t.Errorf("TuneDefault = %d, %v, the context's value %d after %d runs; want the record's winner 1 set on the context, timing nothing", v, err, repsConst.Value(plain), runs)
	}
}

// TestTuneFleet: a process with an empty disk gets the winner from the
// fleet tier (Redis), signed, and times nothing.
func TestTuneFleet(t *testing.T) {
	srv := fleettest.StartRedis(t)
	var warn bytes.Buffer
	for i, cached := range []bool{false, true} {
		ctx, _ := openTune(t, t.TempDir(), srv.URL, &warn, false)
		runs := 0
		res, err := tuneFull(context.Background(), ctx.Queue(), &repsConst, runReps(t, ctx, repsKern, &runs))
		if err != nil {
			t.Fatal(err)
		}
		if res.Cached != cached || res.Value != 1 || (cached && runs != 0) {
			t.Errorf("node %d: %+v after %d runs; want cached %v, winner 1", i, res, runs, cached)
		}
		if err := ctx.Close(); err != nil { // waits for the publish
			t.Fatal(err)
		}
	}
	if strings.Contains(warn.String(), "remote") {
		t.Errorf("warnings: %s", warn.String())
	}
}

// tuneFull and tuneRecordKey are core.TuneFull and core.TuneRecordKey on
// rt's types.
func tuneFull[T any](ctx context.Context, q *rt.Queue, s *rt.SpecConst[T], run func(*rt.Queue, T) error) (core.Tuning[T], error) {
	var f func(*core.Queue, T) error
	if run != nil {
		f = func(q *core.Queue, v T) error { return run((*rt.Queue)(q), v) }
	}
	return core.TuneFull(ctx, cq(q), (*core.SpecConst[T])(s), f)
}

func tuneRecordKey[T any](q *rt.Queue, s *rt.SpecConst[T]) diskcache.Key {
	return core.TuneRecordKey(cq(q), (*core.SpecConst[T])(s))
}
