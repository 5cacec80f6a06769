// Package link carries registrations from rt/codegen into rt without
// exporting rt's registration machinery to applications. rt sets the hooks
// from its init function, which runs before any package that imports
// rt/codegen is initialized; rt/codegen calls them. The handles
// (*rt.Program, *rt.DeviceGlobal[T], ...) and rt's own descriptors travel
// as values of type any, since this package cannot name rt's types.
package link

// Global is the registration of a //dgen:global declaration.
type Global struct {
	ID         string
	Size       int64
	ImageScope bool
	HostAccess uint8
}

// SpecConst is the registration of a //dgen:specconst declaration.
type SpecConst struct {
	ID, Name, Default string
	// Min and Max are the declared bounds, Tune the declared tuning
	// candidates, as OpenCL C literals; empty when not declared.
	Min, Max string
	Tune     []string
}

// Source is one file a program's image was made from, with the xxhash of
// its content when dgen read it and its content as embedded in the build.
type Source struct {
	Name     string
	Hash     uint64
	Embedded string
}

// Program is the registration of a //dgen:program declaration.
type Program struct {
	ID, Name, Image, Options string
	// SpecConsts are the descriptors of the specialization constants the
	// image names; Owns those of the device_image_scope globals it owns.
	SpecConsts, Owns []any
	// Sources lists the files read.
	Sources []Source
}

// Kernel is the registration of a //dgen:kernel spec.
type Kernel struct {
	ID, Name string
	// Program is the program's descriptor; Params the number of the
	// spec's fields; Globals the descriptors of the device globals bound
	// as hidden arguments after them.
	Program any
	Params  int
	Globals []any
}

// KernelImpl is rt's descriptor of a registered kernel spec, as
// rt/codegen sees it: Q, K, R and E are *rt.Queue, *rt.Kernel, rt.Range and
// *rt.Event. A launch goes through its methods without allocating.
type KernelImpl[Q, K, R, E any] interface {
	// Acquire returns the spec's kernel for q's device, locked for
	// setting arguments.
	Acquire(q Q) (K, error)
	// Launch binds the hidden arguments of the locked kernel k, launches
	// it over r after wait with an event and unlocks it; setErr is the first error of
	// setting the arguments, and then nothing is launched.
	Launch(q Q, k K, r R, setErr error, wait []E) (E, error)
	// Submit is Launch without an event.
	Submit(q Q, k K, r R, setErr error, wait []E) error
}

// Hooks, set by rt's init. Each returns rt's descriptor of what it
// registered; Kernel's implements KernelImpl.
var (
	RegisterGlobal    func(handle any, g Global) any
	RegisterSpecConst func(handle any, c SpecConst, def any) any
	RegisterProgram   func(handle any, p Program) any
	RegisterKernel    func(k Kernel) any
	RegisterAllocSite func(handle any, id, name string) any
)
