// Package rawapi carries rt's hand-written program and kernel API to
// package rt/raw. rt cannot name rt/raw (rt/raw imports rt) and rt/raw
// cannot reach rt's unexported functions, so rt installs them here from
// its init function, and rt/raw, initialized after rt, takes them once,
// typed (Of), as rt/codegen takes rt's launch path from rt/internal/desc.
package rawapi

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// Program is a program built for every device of its context, as rt
// makes it: K is *rt.Kernel.
type Program[K any] interface {
	// Name returns the program's name.
	Name() string
	// KernelNames lists the kernels that the program defines.
	KernelNames() ([]string, error)
	// Binaries returns the built program for each device of its context.
	Binaries() ([][]byte, error)
	// Kernel creates the kernel object called name.
	Kernel(name string) (K, error)
	// Release releases the program.
	Release() error
}

// API is rt's raw program and kernel API. The type parameters are rt's
// types, which this package cannot name: C *rt.Context, P *rt.Program,
// Q *rt.Queue, K *rt.Kernel, M *rt.Mem, E *rt.Event, R rt.Range,
// D *rt.Device, I rt.Image and S rt.Sampler.
type API[C, P, Q, K, M, E, R, D, I, S any] struct {
	// Build compiles source with options for every device of c through
	// the context's program cache.
	Build func(c C, name, source, options string) (Program[K], error)
	// BuildGenerated builds the program that the generated handle p
	// registered.
	BuildGenerated func(p P, c C) (Program[K], error)
	// Name returns the kernel's name.
	Name func(k K) string
	// Release releases the kernel object.
	Release func(k K) error
	// CheckArg checks that argument i of k may be set to a value of type
	// t, a number, or an array or struct of numbers.
	CheckArg func(k K, i int, t reflect.Type) error
	// Scalar sets argument i, checked, to a value of size bytes (at most
	// 8) in bits.
	Scalar func(k K, i int, size uintptr, bits uint64)
	// Bytes sets argument i, checked, to size bytes at p (more than 8).
	Bytes func(k K, i int, p unsafe.Pointer, size uintptr)
	// Buffer sets argument i to the memory m.
	Buffer func(k K, i int, m M) error
	// Local sets argument i, a __local pointer, to size bytes.
	Local func(k K, i int, size int) error
	// Image sets argument i to the image img with the access qualifier
	// access.
	Image func(k K, i int, img I, access string) error
	// Sampler sets argument i, a sampler_t, to s.
	Sampler func(k K, i int, s S) error
	// WorkGroupInfo returns the kernel's work-group limits on d.
	WorkGroupInfo func(k K, d D) (driver.KernelWorkGroupInfo, error)
	// Launch enqueues k over r after wait on q and returns its event. The
	// trace's call site is the caller of Launch's caller.
	Launch func(q Q, k K, r R, wait []E) (E, error)
	// Submit is Launch without an event.
	Submit func(q Q, k K, r R, wait []E) error
}

// api holds the one *API that rt installs.
var api any

// Set installs rt's raw API. rt calls it once, from init.
func Set[C, P, Q, K, M, E, R, D, I, S any](a *API[C, P, Q, K, M, E, R, D, I, S]) { api = a }

// Of returns the raw API that rt installed; rt/raw asks for it once,
// while its variables are initialized.
func Of[C, P, Q, K, M, E, R, D, I, S any]() *API[C, P, Q, K, M, E, R, D, I, S] {
	a, ok := api.(*API[C, P, Q, K, M, E, R, D, I, S])
	if !ok {
		panic(fmt.Sprintf("rawapi: rt installed no raw API of type %T (it has %T)", a, api))
	}
	return a
}

// Extra is the rest of rt's raw API, what host code ported from OpenCL
// needs: builds bounded by a context.Context, programs from binaries,
// by-value arguments of a size known at run time, NULL buffers and what a
// kernel says of itself. C is *rt.Context, P *rt.Program, K *rt.Kernel
// and D *rt.Device.
type Extra[C, P, K, D any] struct {
	// BuildContext is API.Build bounded by ctx.
	BuildContext func(ctx context.Context, c C, name, source, options string) (Program[K], error)
	// BuildGeneratedContext is API.BuildGenerated bounded by ctx.
	BuildGeneratedContext func(ctx context.Context, p P, c C) (Program[K], error)
	// Load creates a program from binaries, one per device of c.
	Load func(c C, name string, binaries [][]byte, options string) (Program[K], error)
	// ArgBytes sets argument i to the bytes of v.
	ArgBytes func(k K, i int, v []byte) error
	// NullBuffer sets argument i, a buffer, to NULL.
	NullBuffer func(k K, i int) error
	// NumArgs returns the number of arguments k takes.
	NumArgs func(k K) int
	// CompileWorkGroupSize returns the work-group size that k's
	// reqd_work_group_size requires on d.
	CompileWorkGroupSize func(k K, d D) ([3]int, error)
	// Attributes returns the attributes that k's source declares.
	Attributes func(k K) (string, error)
	// ArgInfo returns what k's source declares of argument i.
	ArgInfo func(k K, i int) (driver.ArgInfo, error)
}

// extra holds the one *Extra that rt installs.
var extra any

// SetExtra installs the rest of rt's raw API. rt calls it once, from init.
func SetExtra[C, P, K, D any](e *Extra[C, P, K, D]) { extra = e }

// ExtraOf returns what SetExtra installed, as Of does.
func ExtraOf[C, P, K, D any]() *Extra[C, P, K, D] {
	e, ok := extra.(*Extra[C, P, K, D])
	if !ok {
		panic(fmt.Sprintf("rawapi: rt installed no raw API of type %T (it has %T)", e, extra))
	}
	return e
}
