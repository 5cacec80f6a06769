package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Program is a device image declared with //dgen:program. Its generated
// code registers the image; the kernel specs of the program launch its
// kernels, and package rt/raw builds it by hand (raw.BuildGenerated).
type Program = core.Program

// SpecConst is a specialization constant declared with //dgen:specconst: the
// kernel source sees it as a macro of its name. T is a number type.
type SpecConst[T any] = core.SpecConst[T]

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
// The host instance caches its registration, so that reaching a global's
// storage from its address takes no registry lookup.
type DeviceGlobal[T any] = core.DeviceGlobal[T]
