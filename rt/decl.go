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

// SpecConst is a specialization constant declared with //dgen:specconst:
// the kernel source sees it as a macro of its name. T is a number type.
type SpecConst[T any] core.SpecConst[T]

// core returns s as the core's constant.
func (s *SpecConst[T]) core() *core.SpecConst[T] { return (*core.SpecConst[T])(s) }

// Set sets the value of s on every queue of c: programs that use it are
// built (once per distinct value) with the macro defined to v, and
// launches of their kernels from then on use that build.
func (s *SpecConst[T]) Set(c *Context, v T) error { return s.core().Set(c.core(), v) }

// Value returns the value that programs built by c from now on see for s:
// the value set on c (Set or Tune), else the default. Value(nil) returns
// the default; a constant that is not registered, or has neither a value
// nor a default, gives the zero value.
func (s *SpecConst[T]) Value(c *Context) T { return s.core().Value(c.core()) }

// Tune chooses the value of s among the candidates that its directive
// declares (tune=) for the device of q, and sets it on q's context, as
// SpecConst.Set does.
//
// If the persistent cache or the fleet tier holds a tuning record for s
// (keyed by s, the images of the programs that use it, the device and the
// other specialization-constant values set on the context), Tune sets its
// winner and times nothing. Otherwise it sets each candidate in turn and
// calls run, which must enqueue a representative launch or sequence on the
// queue it is given and may be called any number of times: once to warm up
// (which builds the candidate's programs through the cache), then
// repeatedly between two markers whose device timestamps give the time,
// until the times agree within 5% or the candidate's share of a 2 s
// device-time budget is spent. Nothing but run is ever launched. A
// candidate whose run fails (say its work-group is larger than the kernel
// allows) is skipped and reported, by a warning and in the trace; if every
// candidate fails, Tune restores the value set before and returns their
// errors, joined. The fastest candidate is set, recorded and returned.
// Context.Stats().Cache counts the candidates timed (Tuned) and the
// winners that records gave (TuneRecords).
//
// Reading a record needs nothing more; timing candidates needs a context
// that profiles (Config.Profiling, DGEN_PROFILE=1), and Tune fails where
// there is no record and q does not profile. The value is the context's,
// as Set's is: tune before other goroutines launch kernels that use s.
// Config.Retune (DGEN_TUNE=force) re-tunes, ignoring records. A record
// that cannot be read, or names a value that is not a candidate, is
// reported by a warning and tuned again; it never chooses a value.
//
// Tune uses context.Background(); TuneContext takes a context.
func (s *SpecConst[T]) Tune(q *Queue, run func(q *Queue) error) (T, error) {
	return s.TuneContext(context.Background(), q, run)
}

// TuneContext is Tune under ctx: ctx bounds the fetch of a record from the
// fleet tier, and once ctx is done no further candidate or sample is
// timed. A cancelled tuning returns an error wrapping ctx.Err(), restores
// the value set before, as a failed tuning does, and records nothing.
func (s *SpecConst[T]) TuneContext(ctx context.Context, q *Queue, run func(q *Queue) error) (T, error) {
	return s.core().TuneContext(ctx, q.core(), queueFunc(run))
}

// Local is the size of a __local kernel parameter: Len elements of T.
type Local[T any] struct {
	Len int
}

// Bytes returns the size in bytes.
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
