package core

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// Tuning: a specialization constant that declares candidates
// (//dgen:specconst tune="8,16,32") gets its value by measurement. The
// program hands SpecConst.Tune a function that runs a representative
// launch or sequence on the queue it is given, with the candidate it is
// given; rt times it under each candidate with the device's timestamps and
// returns the fastest, which it keeps as a tuning record in the persistent
// cache and the fleet tier, keyed by the constant, the programs that use
// it, the device and the other values set on the context, so that a later
// process, here or on another node, gets the winner without timing
// anything. Candidates are per-launch values (speclaunch.go): each runs on
// a queue of its own whose launches use it, and the context's value, which
// every other goroutine's launches use, does not change unless the caller
// asks (TuneDefault).

// Tuning budgets: each candidate is run once to warm up (its program is
// built then, through the cache), then timed at least tuneMinSamples and
// at most tuneMaxSamples times, until the spread of its samples is within
// tuneSpread of their median or the candidate has used its share of
// tuneBudget of device time.
const (
	tuneMinSamples = 5
	tuneMaxSamples = 30
	tuneSpread     = 0.05
	tuneBudget     = 2 * time.Second
	tuneRecordV    = 1
)

// tuning is the outcome of one SpecConst.Tune.
type tuning[T any] struct {
	value  T               // the winner
	lit    string          // the winner's literal
	cached bool            // a tuning record gave the winner; nothing was timed
	timed  int             // candidates timed
	values []T             // the candidates, in declared order; times and errs alike
	times  []time.Duration // median device time of one run; 0 for a failed candidate
	errs   []error         // why a candidate was skipped; nil for the others
}

// tuneRecord is a tuning record as the cache stores it.
type tuneRecord struct {
	V          int              `json:"v"`
	Const      string           `json:"const"`
	Winner     string           `json:"winner"`
	Candidates []tuneRecordTime `json:"candidates"`
}

type tuneRecordTime struct {
	Value string `json:"value"`
	NS    int64  `json:"ns,omitempty"`
	Err   string `json:"error,omitempty"`
}

// Tune chooses the value of s among the candidates that its directive
// declares (tune=) for the device of q, and returns it. The context's
// value of s does not change: pass the winner to the launches that want
// it (s.Of(v) in a kernel spec's field), or make it the context's value
// with TuneDefault.
//
// If the persistent cache or the fleet tier holds a tuning record for s
// (keyed by s, the images of the programs that use it, the device and the
// other specialization-constant values set on the context), Tune returns
// its winner and times nothing. Otherwise it calls run for each candidate
// v in turn with a queue of its own, on q's device and in order with q's
// commands, whose launches run with s=v: a launch there that gives s no
// value of its own (a spec without the field, or with the field zero) uses
// v, and one that gives s another value than v is an error. run must
// launch on that queue a representative launch or sequence with the
// candidate it is given (a work-group size of v, say: v, not
// s.Value(ctx), is the value being timed), and may be called any number of
// times: once to warm up (which builds the candidate's programs through
// the cache), then repeatedly between two markers whose device timestamps
// give the time, until the times agree within 5% or the candidate's share
// of a 2 s device-time budget is spent. A run that launches no kernel
// whose program uses s on the queue it is given is an error of that
// candidate. Nothing but run is ever launched, and the launches of other
// goroutines, on q or elsewhere, keep the context's value throughout.
//
// A candidate whose run fails (say its work-group is larger than the
// kernel allows) is skipped and reported, by a warning and in the trace;
// if every candidate fails, Tune returns their errors, joined. The fastest
// candidate is recorded and returned. Context.Stats().Cache counts the
// candidates timed (Tuned) and the winners that records gave
// (TuneRecords).
//
// Reading a record needs nothing more; timing candidates needs a context
// that profiles (Config.Profiling, DGEN_PROFILE=1), and Tune fails where
// there is no record and q does not profile. Config.Retune
// (DGEN_RETUNE=1) re-tunes, ignoring records. A record that cannot be
// read, or names a value that is not a candidate, is reported by a warning
// and tuned again; it never chooses a value. A device fault stops the
// tuning, which records nothing.
//
// Tune uses context.Background(); TuneContext takes a context.
func (s *SpecConst[T]) Tune(q *Queue, run func(q *Queue, v T) error) (T, error) {
	return s.TuneContext(context.Background(), q, run)
}

// TuneContext is Tune under ctx: ctx bounds the fetch of a record from the
// fleet tier, and once ctx is done no further candidate or sample is
// timed. A cancelled tuning returns an error wrapping ctx.Err() and
// records nothing.
func (s *SpecConst[T]) TuneContext(ctx context.Context, q *Queue, run func(q *Queue, v T) error) (T, error) {
	res, err := s.tune(ctx, q, run)
	return res.value, err
}

// TuneDefault is Tune, and then makes the winner the value of s on q's
// context, as Set does: one atomic change, after every candidate has been
// timed, which the launches that give s no value of their own see from
// then on (Set says exactly when). A tuning that fails changes nothing.
func (s *SpecConst[T]) TuneDefault(q *Queue, run func(q *Queue, v T) error) (T, error) {
	return s.TuneDefaultContext(context.Background(), q, run)
}

// TuneDefaultContext is TuneDefault under ctx, as TuneContext is Tune.
func (s *SpecConst[T]) TuneDefaultContext(ctx context.Context, q *Queue, run func(q *Queue, v T) error) (T, error) {
	res, err := s.tune(ctx, q, run)
	if err != nil {
		return res.value, err
	}
	if err := q.ctx.setSpecValue(s.registration().Name, res.lit); err != nil {
		return res.value, fmt.Errorf("tune specialization constant %s: %w", s.registration().ID, err)
	}
	return res.value, nil
}

// tune is TuneContext with the whole outcome.
func (s *SpecConst[T]) tune(ctx context.Context, q *Queue, run func(q *Queue, v T) error) (tuning[T], error) {
	var res tuning[T]
	d := s.registration()
	if d == nil {
		return res, fmt.Errorf("tune %w", unregistered("specialization constant", unsafe.Pointer(s)))
	}
	fail := func(err error) (tuning[T], error) {
		return res, fmt.Errorf("tune specialization constant %s: %w", d.ID, err)
	}
	chk := checkOf(d)
	switch {
	case len(chk.tune) == 0:
		return fail(fmt.Errorf("%w: its //dgen:specconst directive declares no candidates (tune=\"...\")", ErrInvalidArgument))
	case run == nil:
		return fail(fmt.Errorf("%w: nil tuning function", ErrInvalidArgument))
	case q == nil || q.ctx == nil:
		return fail(fmt.Errorf("%w: nil queue", ErrInvalidArgument))
	case ctx == nil:
		return fail(fmt.Errorf("%w: nil context.Context", ErrInvalidArgument))
	case q.tune != nil:
		return fail(fmt.Errorf("%w: the queue is one that Tune of %s passed its function (tunings do not nest)", ErrInvalidArgument, q.tune.d.ID))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	for _, lit := range chk.tune {
		n, _, _ := chk.parse(lit)
		var v T
		setNum(reflectValue(&v), n)
		res.values = append(res.values, v)
	}
	c := q.ctx
	key := c.tuneKey(d, chk, q)
	if rec, ok := c.loadTuneRecord(ctx, d, chk, key); ok {
		c.counters.tuneRecords.Add(1)
		applyRecord(c, d, chk, rec, &res)
		return res, nil
	}
	if !q.profiling {
		return fail(fmt.Errorf("%w: no tuning record for this device, and the queue on %q does not profile, which timing the candidates needs: open the context with Config.Profiling, or DGEN_PROFILE=1 (once, say, to make the record that later runs read)", ErrInvalidArgument, q.dev.Name))
	}
	err := measure(ctx, q, d, chk, run, &res)
	if err == nil {
		err = c.faultErr() // times taken on a faulted device are no record
	}
	if err != nil {
		return fail(err)
	}
	rec := tuneRecord{V: tuneRecordV, Const: d.ID, Winner: res.lit}
	for i, lit := range chk.tune {
		t := tuneRecordTime{Value: lit, NS: res.times[i].Nanoseconds()}
		if res.errs[i] != nil {
			t.Err = res.errs[i].Error()
		}
		rec.Candidates = append(rec.Candidates, t)
	}
	c.storeTuneRecord(d, key, rec)
	return res, nil
}

// applyRecord fills res from rec, whose winner is one of the candidates.
func applyRecord[T any](c *Context, d *desc.SpecConst, chk *specCheck, rec tuneRecord, res *tuning[T]) {
	res.cached = true
	res.lit = rec.Winner
	res.times = make([]time.Duration, len(chk.tune))
	res.errs = make([]error, len(chk.tune))
	for i, lit := range chk.tune {
		if lit == rec.Winner {
			res.value = res.values[i]
		}
		for _, t := range rec.Candidates {
			if t.Value == lit {
				res.times[i] = time.Duration(t.NS)
				if t.Err != "" {
					res.errs[i] = errors.New(t.Err)
				}
			}
		}
	}
	c.tracing.tr.Mark(fmt.Sprintf("tune %s: %s=%s from a tuning record", d.ID, d.Name, rec.Winner))
}

// measure times every candidate, each as a per-launch value on a queue of
// its own, and fills res with the fastest; with none working, or ctx done,
// it returns their errors, or ctx's.
func measure[T any](ctx context.Context, q *Queue, d *desc.SpecConst, chk *specCheck, run func(*Queue, T) error, res *tuning[T]) error {
	c := q.ctx
	defer c.tracing.tr.Range("tune " + d.ID).End()
	res.times = make([]time.Duration, len(chk.tune))
	res.errs = make([]error, len(chk.tune))
	best := -1
	share := tuneBudget / time.Duration(len(chk.tune))
	for i, lit := range chk.tune {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped after %d of %d candidates: %w", i, len(chk.tune), err)
		}
		r := c.tracing.tr.Range(fmt.Sprintf("%s=%s", d.Name, lit))
		tq := q.tuningQueue(d, lit)
		t, n, err := timeCandidate(ctx, tq, res.values[i], run, share)
		tq.endTuning()
		r.End()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("stopped while timing %s=%s: %w", d.Name, lit, err)
		}
		if errors.Is(err, ErrDeviceFault) {
			return fmt.Errorf("stopped while timing %s=%s: %w", d.Name, lit, err)
		}
		if err != nil {
			res.errs[i] = fmt.Errorf("%s=%s: %w", d.Name, lit, err)
			c.tracing.tr.Mark(fmt.Sprintf("%s=%s skipped: %v", d.Name, lit, err))
			c.tuneWarn("tune %s: candidate %s=%s skipped: %v", d.ID, d.Name, lit, err)
			continue
		}
		res.timed++
		c.counters.tuneTimed.Add(1)
		res.times[i] = t
		c.tracing.tr.Mark(fmt.Sprintf("%s=%s: %v (median of %d device-timed runs)", d.Name, lit, t, n))
		if best < 0 || t < res.times[best] {
			best = i
		}
	}
	if best < 0 {
		return fmt.Errorf("every candidate failed: %w", errors.Join(res.errs...))
	}
	res.value, res.lit = res.values[best], chk.tune[best]
	return nil
}

// timeCandidate warms up with one run of v on tq, a tuning queue for v,
// and returns the median device time of run over the samples it takes, or
// ctx's error once ctx is done.
func timeCandidate[T any](ctx context.Context, tq *Queue, v T, run func(*Queue, T) error, budget time.Duration) (time.Duration, int, error) {
	if err := runChecked(tq, v, run); err != nil {
		return 0, 0, err
	}
	if !tq.tune.used.Load() {
		t := tq.tune.d
		return 0, 0, fmt.Errorf("%w: the tuning function launched no kernel whose program uses %s on the queue it was given: launch there, with the candidate it is given, or %s is not what it times", ErrInvalidArgument, t.Name, t.Name)
	}
	if err := tq.Finish(); err != nil {
		return 0, 0, err
	}
	var samples []time.Duration
	var spent time.Duration
	for len(samples) < tuneMaxSamples {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		t, err := sample(tq, v, run)
		if err != nil {
			return 0, 0, err
		}
		samples = append(samples, t)
		spent += t
		if len(samples) >= tuneMinSamples && (settled(samples) || spent >= budget) {
			break
		}
	}
	slices.Sort(samples)
	return samples[len(samples)/2], len(samples), nil
}

// runChecked calls run, turning a panic into an error: a tuning function
// that panics for one candidate is that candidate's failure.
func runChecked[T any](q *Queue, v T, run func(*Queue, T) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tuning function panicked: %v", p)
		}
	}()
	return run(q, v)
}

// sample times one run between two markers by their device timestamps.
func sample[T any](q *Queue, v T, run func(*Queue, T) error) (time.Duration, error) {
	m0, err := q.Marker()
	if err != nil {
		return 0, err
	}
	defer m0.Release()
	if err := runChecked(q, v, run); err != nil {
		return 0, err
	}
	m1, err := q.Marker()
	if err != nil {
		return 0, err
	}
	defer m1.Release()
	t0, err := m0.Timing()
	if err != nil {
		return 0, err
	}
	t1, err := m1.Timing()
	if err != nil {
		return 0, err
	}
	if t1.Ended == 0 || t1.Ended < t0.Ended {
		return 0, fmt.Errorf("%w: the device on %q gave no usable marker timestamps (%d, %d)", ErrInvalidArgument, q.dev.Name, t0.Ended, t1.Ended)
	}
	return time.Duration(t1.Ended - t0.Ended), nil
}

// settled reports whether the samples' spread (between the 20th and 80th
// percentiles) is within tuneSpread of their median.
func settled(samples []time.Duration) bool {
	s := slices.Clone(samples)
	slices.Sort(s)
	lo, hi, med := s[len(s)/5], s[len(s)-1-len(s)/5], s[len(s)/2]
	return med > 0 && float64(hi-lo) <= tuneSpread*float64(med)
}

// tuneKey is the cache key of the tuning record of d for q's device:
// the constant's id and candidates, the images (with options) of the
// programs that use it, and the other specialization-constant values set
// (on the context, and on q where it is a view).
func (c *Context) tuneKey(d *desc.SpecConst, chk *specCheck, q *Queue) diskcache.Key {
	h := xxhash.New()
	for _, p := range desc.ProgramsUsing(d) {
		for _, part := range []string{p.ID, p.Image, p.Options} {
			var n [8]byte
			binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
			h.Write(n[:])
			h.WriteString(part)
		}
	}
	var others []byte
	vals := c.cache.pc.Specs()
	if q.spec != nil { // a view's values come before the context's
		vals = progcache.Overlay(vals, q.spec.vals)
	}
	for _, v := range vals {
		if v.Name != d.Name {
			others = binary.AppendUvarint(others, uint64(len(v.Name)))
			others = append(others, v.Name...)
			others = binary.AppendUvarint(others, uint64(len(v.Value)))
			others = append(others, v.Value...)
		}
	}
	dev := q.dev
	return diskcache.Key{
		Device:      diskcache.Device{Platform: dev.Platform, Name: dev.Name, Version: dev.Version, DriverVersion: dev.DriverVersion},
		ImageID:     "dgen.tune:" + d.ID,
		ImageHash:   h.Sum64(),
		SpecConsts:  others,
		Options:     "tune=" + strings.Join(chk.tune, ","),
		ProgramName: "tuning record of " + d.Name,
	}
}

// loadTuneRecord returns the tuning record of key from the persistent
// cache or, with that off, the remote tier. A record that does not
// decode, is of another constant or names a winner that is not a
// candidate is reported by a warning and ignored.
func (c *Context) loadTuneRecord(ctx context.Context, d *desc.SpecConst, chk *specCheck, key diskcache.Key) (tuneRecord, bool) {
	var rec tuneRecord
	if c.settings.retune {
		return rec, false
	}
	var (
		b  []byte
		ok bool
	)
	switch {
	case c.cache.disk != nil && c.cache.disk.Enabled():
		var err error
		b, _, ok, err = c.cache.disk.Lookup(key)
		if err != nil {
			c.tuneWarn("tuning record of %s unreadable, tuning again: %v", d.ID, err)
		}
	case c.cache.remote != nil:
		b, ok = c.cache.remote.Fetch(ctx, key)
	}
	if !ok {
		return rec, false
	}
	err := json.Unmarshal(b, &rec)
	switch {
	case err != nil:
	case rec.V != tuneRecordV || rec.Const != d.ID:
		err = fmt.Errorf("version %d of constant %q", rec.V, rec.Const)
	case !slices.Contains(chk.tune, rec.Winner):
		err = fmt.Errorf("winner %q is not one of the candidates %s", rec.Winner, strings.Join(chk.tune, ","))
	}
	if err != nil {
		c.tuneWarn("tuning record of %s ignored, tuning again: %v", d.ID, err)
		return rec, false
	}
	return rec, true
}

// storeTuneRecord stores rec as the tuning record of key, locally and
// on the fleet tier.
func (c *Context) storeTuneRecord(d *desc.SpecConst, key diskcache.Key, rec tuneRecord) {
	b, err := json.Marshal(rec)
	if err != nil || c.cache.disk == nil {
		return
	}
	if err := c.cache.disk.Put(key, b); err != nil {
		c.cache.pc.Logf("store tuning record of %s: %v", d.ID, err)
	}
}

// reflectValue returns the settable value *p.
func reflectValue[T any](p *T) reflect.Value { return reflect.ValueOf(p).Elem() }

// tuneWarn logs a tuning warning through the context's logger.
func (c *Context) tuneWarn(format string, args ...any) {
	c.log().Warn("dgen: " + fmt.Sprintf(format, args...))
}
