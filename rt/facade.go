package rt

//go:generate go run ./internal/cmd/mkfacade

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// rt is a facade over rt/internal/core, its implementation, and
// zz_generated.facade.go is most of it: mkfacade writes it from the core's
// exported declarations and their doc comments (go generate ./rt; make
// test checks that it is fresh). What is here is what the core cannot
// say: rt's own types, and the calls that take them.

// Memory is device memory of any element type: an rt.Buffer, whichever
// its T. An Image1DBuffer's ImageDesc.Buffer takes it. Only rt implements
// it.
type Memory interface {
	memory() *core.Mem
}

// memory implements Memory.
func (b Buffer[T]) memory() *core.Mem { return core.BufferMem(core.Buffer[T](b)) }

// memOf returns the memory of m; nil for nil.
func memOf(m Memory) *core.Mem {
	if m == nil {
		return nil
	}
	return m.memory()
}

// memoryOf returns v, the core's ImageDesc.BufferValue, as the Memory it
// is; nil for none.
func memoryOf(v any) Memory {
	m, _ := v.(Memory)
	return m
}

// SpecValue is a value of a specialization constant, as SpecConst.Of makes
// it: a Spec of any type. Program.Build, BuildVariant and Queue.WithSpec
// take them. Only rt implements it.
type SpecValue interface {
	specValue() core.SpecValue
}

// specValue implements SpecValue.
func (v Spec[T]) specValue() core.SpecValue { return core.Spec[T](v) }

// specValues returns values as the core's.
func specValues(values []SpecValue) []core.SpecValue {
	if len(values) == 0 {
		return nil
	}
	out := make([]core.SpecValue, len(values))
	for i, v := range values {
		if v != nil {
			out[i] = v.specValue()
		}
	}
	return out
}

// Build builds the program for every device of c, with its device globals
// and c's values of its specialization constants, with values in their
// place, as the first launch of one of its kernel specs with those values
// would, and keeps it in c's program cache. That first launch may wait for
// a compile, for another process's build of the same program (up to the
// persistent cache's build wait) and for the cache's remote tier: Build
// moves that wait out of it and bounds it by ctx, as a generated
// EnqueueContext bounds it in the launch. When ctx is done first, Build
// returns an error wrapping ctx.Err(); the build goes on for whoever else
// waits for it. With the in-memory cache off (Config.Cache), a launch
// builds again, from the persistent cache.
//
// values are the variant's own values (SpecConst.Of), as a launch gives
// them in its spec's fields or a queue from Queue.WithSpec gives them: a
// service builds the variants it will serve before it takes its first
// request, and their first launches build nothing. A value of a constant
// that the program does not use, a zero Spec, or two values of one
// constant are errors wrapping ErrInvalidArgument, a value outside its
// constant's bounds one wrapping ErrOutOfRange, and nothing is built.
func (p *Program) Build(ctx context.Context, c *Context, values ...SpecValue) error {
	return (*core.Program)(p).Build(ctx, (*core.Context)(c), specValues(values)...)
}

// BuildVariant builds, as Program.Build does, the variant for values of
// every registered program that uses at least one of their constants:
// every program whose launches the values may reach. It returns the
// programs' errors, joined; the programs that built are kept in c's
// program cache all the same.
func BuildVariant(ctx context.Context, c *Context, values ...SpecValue) error {
	return core.BuildVariant(ctx, (*core.Context)(c), specValues(values)...)
}

// WithSpec returns a view of q whose launches run with values
// (SpecConst.Of) wherever they give no value of their own: the constants
// that every launch of a request depends on, given once for the request
// rather than in every kernel spec of the program and at every launch.
// A launch takes each specialization-constant value from the first of its
// own (a kernel spec's Spec field), its queue's (WithSpec), and its
// context's (SpecConst.Set, else the default); a constant that the
// launch's program does not use is ignored. The context's values may
// change while the request runs; the view's never do.
//
// The view is a queue over q's commands, in order with them: enqueue,
// transfer and finish on either. It is one per set of values (the same
// values give the same view), parks kernel instances of its own, and
// lives as long as q; give back to the pool (Context.ReleaseQueue) the
// queue that AcquireQueue returned, not a view of it. A view of a queue
// that AcquireQueueContext bound to a request is bound as the queue is,
// and a graph recorded on a view (Queue.Record) keeps the view's values. A view of a view
// has the values of both, the later in place of the earlier. A zero Spec
// or two values of one constant is an error wrapping ErrInvalidArgument,
// a value outside its constant's bounds one wrapping ErrOutOfRange; a
// queue that records a graph, or that SpecConst.Tune passed its function,
// has no views (ErrInvalidArgument).
func (q *Queue) WithSpec(values ...SpecValue) (*Queue, error) {
	v, err := (*core.Queue)(q).WithSpec(specValues(values)...)
	return (*Queue)(v), err
}
