package core

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// Specialization constants per launch, as SYCL's handler sets them
// (cgh.set_specialization_constant): a kernel spec's field of type Spec[T],
// tagged dgen:"spec=Name", gives that launch its own value of the
// constant Name, which no other launch sees. The generated Enqueue
// collects the spec's values into a SpecArgs (SetSpec) and acquires its
// kernel instance with them (AcquireSpec): the queue's slot holds an
// instance per (spec, values), so that a launch whose values match the
// parked instance's costs what a plain launch costs; any other goes to the
// program cache, which is keyed by the values and builds each variant once.
//
// A value is checked when a launch first meets it, on the way to the
// cache: outside the constant's bounds it is an error wrapping
// ErrOutOfRange and nothing is launched. A launch that leaves a field zero
// uses the context's value (SpecConst.Set, else the default) as it is when
// the launch acquires its instance.
//
// Tuning (tune.go) hands its function a queue of its own per candidate
// (tuningQueue) whose launches use the candidate for every kernel whose
// program uses the constant being tuned, unless the launch gives the same
// value itself; any other value is an error.

// Spec is a launch's own value of a specialization constant: the type of a
// kernel spec's field tagged dgen:"spec=Name", where Name is a
// //dgen:specconst variable of the package whose macro the kernel's program
// uses. SpecConst.Of makes one:
//
//	//dgen:kernel program=Search name=nearest
//	type Nearest struct {
//		Base, Query rt.Buffer[float32]
//		Best        rt.Buffer[int32]
//		N           int32
//		Dim         rt.Spec[int32] `dgen:"spec=Dim"` // not a kernel argument
//	}
//
//	err = (&Nearest{Base: b, Query: qv, Best: best, N: n, Dim: Dim.Of(128)}).Enqueue(q, r)
//
// That launch, and no other, runs with Dim=128, whatever the context's
// value and whatever other goroutines launch meanwhile. The zero Spec
// gives no value: the launch uses the context's. dgen checks the field's
// type against the constant's, and a constant argument of Of against the
// directive's bounds; at run time a value outside them makes Enqueue
// return an error wrapping ErrOutOfRange, and nothing is launched. The
// first launch with a set of values builds that variant of the program
// (once, however many goroutines ask); later launches with the same values
// on a queue cost what a launch without them costs, and allocate nothing.
type Spec[T any] struct {
	// Its fields and its specValue are specOf's, embedded, so that rt's
	// Spec, defined over this one, implements SpecValue as this one does.
	specOf[T]
}

// specOf is a Spec's value.
type specOf[T any] struct {
	c   *SpecConst[T] // the constant whose Of made the value
	v   T
	set bool
}

// Of returns v as a launch's own value of s: assign it to a kernel spec's
// field of type Spec[T] tagged dgen:"spec=Name", where Name is s, and that
// launch, and no other, runs with s=v. A value outside the bounds of s is
// an error of the launch.
func (s *SpecConst[T]) Of(v T) Spec[T] { return Spec[T]{specOf[T]{c: s, v: v, set: true}} }

// Get returns the value and true, or the zero value and false for the zero
// Spec, which leaves the constant to the context.
func (v Spec[T]) Get() (T, bool) { return v.v, v.set }

// SpecValue is a value of a specialization constant, as SpecConst.Of makes
// it: a Spec of any type. Program.Build, BuildVariant and Queue.WithSpec
// take them. Only rt implements it.
type SpecValue interface {
	// specValue returns the constant and its value as a build sees it
	// (the canonical literal), checked against the constant's bounds.
	specValue() (*desc.SpecConst, string, error)
}

func (v specOf[T]) specValue() (*desc.SpecConst, string, error) {
	if !v.set {
		return nil, "", fmt.Errorf("%w: the zero Spec gives no value (write C.Of(v))", ErrInvalidArgument)
	}
	d := v.c.registration()
	if d == nil {
		return nil, "", unregistered("specialization constant", unsafe.Pointer(v.c))
	}
	lit, err := specLiteral(v.v)
	if err != nil {
		return nil, "", err
	}
	canon, err := checkOf(d).check(lit)
	if err != nil {
		return nil, "", err
	}
	return d, canon, nil
}

// specValuesOf checks values and returns their constants, in order, and
// the values as the program cache's overrides: a zero Spec, or two values
// of one constant, is an error wrapping ErrInvalidArgument, a value out
// of its bounds one wrapping ErrOutOfRange.
func specValuesOf(values []SpecValue) ([]*desc.SpecConst, []progcache.SpecValue, error) {
	consts := make([]*desc.SpecConst, 0, len(values))
	over := make([]progcache.SpecValue, 0, len(values))
	for i, v := range values {
		if v == nil {
			return nil, nil, fmt.Errorf("value %d: %w: nil", i, ErrInvalidArgument)
		}
		d, lit, err := v.specValue()
		if err != nil {
			return nil, nil, fmt.Errorf("value %d: %w", i, err)
		}
		if slices.ContainsFunc(over, func(o progcache.SpecValue) bool { return o.Name == d.Name }) {
			return nil, nil, fmt.Errorf("value %d: %w: a second value of specialization constant %s", i, ErrInvalidArgument, d.Name)
		}
		consts = append(consts, d)
		over = append(over, progcache.SpecValue{Name: d.Name, Value: lit})
	}
	return consts, over, nil
}

// MaxSpecArgs is the most fields of one kernel spec that give a launch its
// own specialization-constant values; dgen refuses a spec with more.
const MaxSpecArgs = 8

// SpecArgs are a launch's own values of the specialization constants that
// its spec's fields name (desc.Kernel.Specs, in order): fixed-size data,
// compared whole with the values of the instance parked in a queue's slot,
// so that a launch allocates nothing for them. The zero SpecArgs gives no
// value.
type SpecArgs struct {
	bits [MaxSpecArgs]uint64 // value i, as desc.ScalarBits stores it
	set  uint16              // bit i: value i is given
	bad  uint16              // bit i: value i was made by another constant than its field's
}

// SetSpec records v, the value of the spec's field for constant c, as
// value i of a: nothing for the zero Spec; a Spec made by another
// constant's Of is an error of the launch.
func SetSpec[T any](a *SpecArgs, i int, c *SpecConst[T], v Spec[T]) {
	if !v.set {
		return
	}
	if v.c != c {
		a.bad |= 1 << i
		return
	}
	a.set |= 1 << i
	a.bits[i] = desc.ScalarBits(v.v)
}

// AcquireSpec is Acquire for a spec whose fields give specialization-
// constant values (a): the instance parked in q's slot when it was made
// under the same values (and the context's values have not changed since),
// else one from the kernel cache for the variant that a selects, whose
// values are checked then.
func AcquireSpec(q *Queue, d *desc.Kernel, a *SpecArgs) (*Kernel, error) {
	if q == nil {
		return nil, fmt.Errorf("kernel %s: %w: nil queue", d.ID, ErrInvalidArgument)
	}
	return q.acquireSpec(context.Background(), d, a)
}

// AcquireSpecContext is AcquireSpec bounded by ctx, as AcquireContext is
// Acquire.
func AcquireSpecContext(ctx context.Context, q *Queue, d *desc.Kernel, a *SpecArgs) (*Kernel, error) {
	if q == nil {
		return nil, fmt.Errorf("kernel %s: %w: nil queue", d.ID, ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	return q.acquireSpec(ctx, d, a)
}

// acquireSpec is AcquireSpec and AcquireSpecContext for a q that is not
// nil.
func (q *Queue) acquireSpec(ctx context.Context, d *desc.Kernel, a *SpecArgs) (*Kernel, error) {
	i := q.specSlotArgs(d, a)
	h := q.specs[i].Swap(nil)
	if h != nil && h.d == d && h.args == *a && q.ctx.cache.pc.CurrentSince(h.ck, h.gen, &h.epoch) {
		h.k.setErr = nil
		return h.k, nil
	}
	return q.acquireMiss(ctx, d, a, i, h)
}

// specSlotArgs returns the index in q.specs of the slot of d launched with
// a: the values mix into it, so that a queue that alternates between a few
// values of one spec keeps an instance of each parked.
func (q *Queue) specSlotArgs(d *desc.Kernel, a *SpecArgs) int {
	x := uint64(uintptr(unsafe.Pointer(d)))
	for i := range min(len(d.Specs), MaxSpecArgs) {
		x = (x ^ a.bits[i]) * 0x9E3779B97F4A7C15
	}
	x ^= uint64(a.set) << 48
	return int(x * 0x9E3779B97F4A7C15 >> 61)
}

// specOverrides returns the values that a launch of d on q gives in place
// of the context's: the spec's own (a), checked against their constants'
// bounds, and on a tuning queue the candidate being timed. Nil when there
// are none.
func (q *Queue) specOverrides(d *desc.Kernel, a *SpecArgs) ([]progcache.SpecValue, error) {
	if a.bad != 0 {
		i := 0
		for a.bad&(1<<i) == 0 {
			i++
		}
		name := "?"
		if i < len(d.Specs) {
			name = d.Specs[i].Name
		}
		return nil, fmt.Errorf("kernel %s: %w: its value of specialization constant %s was made by another constant's Of (write %s.Of(v))", d.ID, ErrInvalidArgument, name, name)
	}
	var over []progcache.SpecValue
	if a.set != 0 {
		if len(d.Specs) > MaxSpecArgs || a.set>>len(d.Specs) != 0 {
			return nil, fmt.Errorf("kernel %s: %w: values for %d specialization constants, the spec names %d: run go generate", d.ID, ErrInvalidArgument, bits.OnesCount16(a.set), len(d.Specs))
		}
		over = make([]progcache.SpecValue, 0, len(d.Specs)+1)
		for i, sc := range d.Specs {
			if a.set&(1<<i) == 0 {
				continue
			}
			lit, err := checkOf(sc).literalOfBits(a.bits[i])
			if err != nil {
				return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
			}
			over = append(over, progcache.SpecValue{Name: sc.Name, Value: lit})
		}
	}
	over = q.withQueueSpec(over) // queuespec.go
	if t := q.tune; t != nil && slices.Contains(d.Program.SpecConsts, t.d) {
		t.used.Store(true)
		i := slices.IndexFunc(over, func(v progcache.SpecValue) bool { return v.Name == t.d.Name })
		switch {
		case i < 0:
			over = append(over, progcache.SpecValue{Name: t.d.Name, Value: t.lit})
		case over[i].Value != t.lit:
			return nil, fmt.Errorf("kernel %s: %w: the launch gives %s=%s on the queue that SpecConst.Tune passed its function while it times %s=%s: launch with the candidate that Tune passes (or leave the field zero)", d.ID, ErrInvalidArgument, t.d.Name, over[i].Value, t.d.Name, t.lit)
		}
	}
	return over, nil
}

// tuningQueue returns a queue on q's device, over q's driver queue, whose
// launches run with d=lit (tuneOverride): the queue that SpecConst.Tune
// hands its function for one candidate. Other goroutines' launches on q
// are not affected. On a view (WithSpec) its launches keep the view's
// values of the other constants; the candidate takes the place of the
// view's value of d. endTuning ends it.
func (q *Queue) tuningQueue(d *desc.SpecConst, lit string) *Queue {
	tq := &Queue{ctx: q.ctx, gate: q.gate, dev: q.dev, tq: q.tq, launcher: q.launcher, drv: q.drv, profiling: q.profiling,
		lateTimes: q.lateTimes, timer: q.timer, id: q.id, prio: q.prio, asked: q.asked, tune: &tuneOverride{d: d, lit: lit}}
	if q.spec != nil {
		vals := slices.DeleteFunc(slices.Clone(q.spec.vals), func(v progcache.SpecValue) bool { return v.Name == d.Name })
		if len(vals) > 0 {
			tq.spec = &queueSpec{vals: vals}
		}
	}
	return tq
}

// endTuning gives the kernel instances parked in tq's slots back to their
// prototypes' pools, as endRecording does for a recording queue, and
// reports the device times of its traced commands, which wait for them.
func (tq *Queue) endTuning() {
	tq.drainTrace(true)
	for i := range tq.specs {
		if h := tq.specs[i].Swap(nil); h != nil {
			h.unpark()
		}
	}
}

// variantLabel returns the name of the kernel k as traces and graphs show
// it: its name, and the specialization-constant values of its program's
// variant in brackets ("matmul[TILE=16]"); made once per prototype.
func (k *prototype) variantLabel(specs []progcache.SpecValue) string {
	if p := k.label.Load(); p != nil {
		return *p
	}
	s := k.name
	if len(specs) > 0 {
		var b strings.Builder
		b.WriteString(k.name)
		b.WriteByte('[')
		for i, v := range specs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(v.Name)
			b.WriteByte('=')
			b.WriteString(v.Value)
		}
		b.WriteByte(']')
		s = b.String()
	}
	k.label.CompareAndSwap(nil, &s)
	return *k.label.Load()
}
