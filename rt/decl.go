package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Program is a device image declared with //dgen:program. Its generated
// code registers the image; the kernel specs of the program launch its
// kernels, and package rt/raw builds it by hand (raw.BuildGenerated).
type Program = core.Program

// SpecConst is a specialization constant declared with //dgen:specconst: the
// kernel source sees it as a macro of its name. T is a number type.
//
// A launch gets its value from one of two places. Its own value, given by
// a field of its kernel spec (see Spec), belongs to that launch alone, as
// a value that SYCL's handler sets belongs to one submission. Without one,
// the launch uses the context's value: Set's, TuneDefault's, else the
// directive's default. Each set of values is a variant of the program,
// built once and cached under its values.
type SpecConst[T any] = core.SpecConst[T]

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
type Spec[T any] = core.Spec[T]

// Local is the size of a __local kernel parameter: Len elements of T.
type Local[T any] = core.Local[T]

// AllocSite is a named allocation site. Declare one per place in the
// program that allocates, mark it //dgen:alloc, and allocate through it:
// its tag keys the allocator's free list, so that a buffer freed by one
// iteration serves the next. Images have a site type of their own,
// ImageSite.
type AllocSite[T any] = core.AllocSite[T]

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
// storage from its address takes no registry lookup.
type DeviceGlobal[T any] = core.DeviceGlobal[T]
