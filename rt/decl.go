package rt

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// Program is a device image declared with //dgen:program. Its generated
// code registers the image; the kernel specs of the program launch its
// kernels, and package rt/raw builds it by hand (raw.BuildGenerated).
type Program core.Program

// Build builds the program for every device of c, with its device globals
// and c's values of its specialization constants, as the first launch of
// one of its kernel specs would, and keeps it in c's program cache. That
// first launch may wait for a compile, for another process's build of the
// same program (up to the persistent cache's build wait) and for the
// cache's remote tier: Build moves that wait out of it and bounds it by
// ctx, as a generated EnqueueContext bounds it in the launch. When ctx is
// done first, Build returns an error wrapping ctx.Err(); the build goes on
// for whoever else waits for it. With the in-memory cache off
// (Config.Cache), a launch builds again, from the persistent cache.
func (p *Program) Build(ctx context.Context, c *Context) error {
	return (*core.Program)(p).Build(ctx, c.core())
}

// SpecConst is a specialization constant declared with //dgen:specconst: the
// kernel source sees it as a macro of its name. T is a number type.
//
// A launch gets its value from one of two places. Its own value, given by
// a field of its kernel spec (see Spec), belongs to that launch alone, as
// a value that SYCL's handler sets belongs to one submission. Without one,
// the launch uses the context's value: Set's, TuneDefault's, else the
// directive's default. Each set of values is a variant of the program,
// built once and cached under its values.
type SpecConst[T any] core.SpecConst[T]

// core returns s as the core's constant.
func (s *SpecConst[T]) core() *core.SpecConst[T] { return (*core.SpecConst[T])(s) }

// Of returns v as a launch's own value of s: assign it to a kernel spec's
// field of type Spec[T] tagged dgen:"spec=Name", where Name is s, and that
// launch, and no other, runs with s=v. A value outside the bounds of s is
// an error of the launch.
func (s *SpecConst[T]) Of(v T) Spec[T] { return Spec[T](s.core().Of(v)) }

// Set makes v the value of s on c: the value of every launch, on any queue
// of c, of a kernel whose program uses s and that gives s no value of its
// own (a kernel spec without a field of type Spec[T] for s, or with that
// field zero). Programs are built with the macro defined to v, once per
// distinct set of values, and cached under them. A value outside the
// directive's bounds is an error wrapping ErrOutOfRange, and nothing
// changes.
//
// Set is a program-wide change, allowed while other goroutines launch. It
// is atomic: each launch takes the context's values once, when it
// acquires its kernel, all from before one Set or all from after it. A
// launch whose Enqueue begins after Set returns (in the Go memory model's
// order) runs with v; one that began before may run with the earlier value
// even if the driver receives it after Set returns. Commands already
// enqueued run as they were enqueued, and a graph's launches as they were
// recorded. Launches that give s their own value, and the candidates that
// Tune times, do not see Set at all. Where one part of a program needs a
// value of its own, give it per launch rather than Set it.
func (s *SpecConst[T]) Set(c *Context, v T) error { return s.core().Set(c.core(), v) }

// Value returns the context's value of s: the value that launches on c
// that give s no value of their own run with from now on, the value set
// on c (Set or TuneDefault), else the default. Value(nil) returns the
// default; a constant that is not registered, or has neither a value nor
// a default, gives the zero value. A launch's own value (Spec) is not
// the context's, and inside a tuning function the candidate being timed
// is the value that Tune passes it, not Value's.
func (s *SpecConst[T]) Value(c *Context) T { return s.core().Value(c.core()) }

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
	return s.core().TuneContext(ctx, q.core(), tuneFunc(run))
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
	return s.core().TuneDefaultContext(ctx, q.core(), tuneFunc(run))
}

// tuneFunc returns f as the core's tuning function.
func tuneFunc[T any](f func(q *Queue, v T) error) func(q *core.Queue, v T) error {
	if f == nil {
		return nil
	}
	return func(q *core.Queue, v T) error { return f((*Queue)(q), v) }
}

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
type Spec[T any] core.Spec[T]

// Get returns the value and true, or the zero value and false for the zero
// Spec, which leaves the constant to the context.
func (v Spec[T]) Get() (T, bool) { return core.Spec[T](v).Get() }

// Local is the size of a __local kernel parameter: Len elements of T.
// A launch refuses a negative Len, or one whose byte size overflows.
type Local[T any] struct {
	Len int
}

// Bytes returns the size in bytes, Len times the size of T, or -1 where
// Len is negative or the product does not fit in an int: a launch refuses
// -1 with an error wrapping ErrInvalidArgument, as it refuses 0.
func (l Local[T]) Bytes() int { return core.Local[T](l).Bytes() }

// AllocSite is a named allocation site. Declare one per place in the
// program that allocates, mark it //dgen:alloc, and allocate through it:
// its tag keys the allocator's free list, so that a buffer freed by one
// iteration serves the next. Images have a site type of their own,
// ImageSite.
type AllocSite[T any] core.AllocSite[T]

// Alloc allocates a buffer of n elements of T under the site's tag on q's
// device. It is served from the tag's free block when that block holds
// between n and 2n elements' worth of bytes, and otherwise from the
// driver, the new block made resident at once so that out of memory shows
// here (errors.Is(err, ErrOutOfMemory), after held blocks were released
// and the allocation retried). A request above the device's maximum
// allocation is an error wrapping ErrTooLarge; a site that dgen did not
// register is one wrapping ErrNotGenerated. Free gives the buffer back to
// the tag's free list. Alloc never waits for the device: a block reused
// on another queue than its last use's makes that queue wait, on the
// device, for that use.
func (s *AllocSite[T]) Alloc(q *Queue, n int) (Buffer[T], error) {
	b, err := (*core.AllocSite[T])(s).Alloc(q.core(), n)
	return Buffer[T](b), err
}

// Tag returns the site's allocation tag, as stats.Alloc.Tag and traces
// name it, or 0 if the site is not registered.
func (s *AllocSite[T]) Tag() uint32 { return (*core.AllocSite[T])(s).Tag() }

// DeviceGlobal is a device global variable declared with //dgen:global: a
// value of T that kernels refer to by the variable's name. An ordinary
// global has one zero-initialised instance per device, shared by every
// program; a device_image_scope global has one per program image and
// device. T must be plain data.
//
// Specialization-constant values choose code, not data: the variants of a
// program built for different values (a launch's own, or the context's)
// share its globals. A value written under one set of values, by the host
// or by a kernel, is what a launch under any other set reads, on the same
// device; a global's storage is never per variant.
//
// The host instance caches its registration, so that reaching a global's
// storage from its address takes no registry lookup. Its accessors block
// until the copy is done, as Buffer.Read and Write do; their Context forms
// bound the wait for the commands before the copy.
type DeviceGlobal[T any] core.DeviceGlobal[T]

// core returns g as the core's global.
func (g *DeviceGlobal[T]) core() *core.DeviceGlobal[T] { return (*core.DeviceGlobal[T])(g) }

// Read returns the global's value on q's device.
func (g *DeviceGlobal[T]) Read(q *Queue, wait ...*Event) (T, error) {
	var w core.WaitList
	return g.core().Read(q.core(), waits(&w, wait)...)
}

// Write sets the global's value on q's device and waits until it is done.
func (g *DeviceGlobal[T]) Write(q *Queue, v T, wait ...*Event) error {
	var w core.WaitList
	return g.core().Write(q.core(), v, waits(&w, wait)...)
}

// ReadBytes copies len(dst) bytes of the global's value, from byte off,
// into dst: a part of the value, as Read reads all of it. A span outside
// the value is an error wrapping ErrOutOfRange, and dst is left alone.
func (g *DeviceGlobal[T]) ReadBytes(q *Queue, off int, dst []byte, wait ...*Event) error {
	var w core.WaitList
	return g.core().ReadBytes(q.core(), off, dst, waits(&w, wait)...)
}

// WriteBytes copies src into the global's value from byte off: a part of
// the value, as Write writes all of it. A span outside the value is an
// error wrapping ErrOutOfRange, and nothing is written.
func (g *DeviceGlobal[T]) WriteBytes(q *Queue, off int, src []byte, wait ...*Event) error {
	var w core.WaitList
	return g.core().WriteBytes(q.core(), off, src, waits(&w, wait)...)
}

// ReadContext is Read bounded by ctx: when ctx is done before the commands
// enqueued on q before it, and the events of wait, have completed, it
// returns an error wrapping ctx.Err(), and they run on.
func (g *DeviceGlobal[T]) ReadContext(ctx context.Context, q *Queue, wait ...*Event) (T, error) {
	var w core.WaitList
	return g.core().ReadContext(ctx, q.core(), waits(&w, wait)...)
}

// WriteContext is Write bounded by ctx, as ReadContext is Read: when ctx
// is done first, nothing is written.
func (g *DeviceGlobal[T]) WriteContext(ctx context.Context, q *Queue, v T, wait ...*Event) error {
	var w core.WaitList
	return g.core().WriteContext(ctx, q.core(), v, waits(&w, wait)...)
}

// ReadBytesContext is ReadBytes bounded by ctx, as ReadContext is Read.
func (g *DeviceGlobal[T]) ReadBytesContext(ctx context.Context, q *Queue, off int, dst []byte, wait ...*Event) error {
	var w core.WaitList
	return g.core().ReadBytesContext(ctx, q.core(), off, dst, waits(&w, wait)...)
}

// WriteBytesContext is WriteBytes bounded by ctx, as WriteContext is
// Write.
func (g *DeviceGlobal[T]) WriteBytesContext(ctx context.Context, q *Queue, off int, src []byte, wait ...*Event) error {
	var w core.WaitList
	return g.core().WriteBytesContext(ctx, q.core(), off, src, waits(&w, wait)...)
}
