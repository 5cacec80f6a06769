package rt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dgen-go/dgen/rt/internal/link"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// programInfo is the registration of a //dgen:program declaration.
type programInfo struct {
	image *progcache.Image // the program cache's key, with the defaults of the spec constants the image names
	stale error            // set when a source changed after go generate; see source.go
}

// kernelInfo is the registration of a //dgen:kernel spec. It implements
// link.KernelImpl for rt/codegen.
type kernelInfo struct {
	id      string
	prog    *programInfo
	params  int
	globals []*globalInfo
	key     *progcache.KernelKey // the kernel as the cache knows it: image and name
}

// hostAccess says what the host may do with a device global: the values of
// codegen.HostAccess.
type hostAccess uint8

const (
	hostReadWrite hostAccess = iota
	hostRead
	hostWrite
	hostNone
)

// String returns the mode as the directive spells it.
func (h hostAccess) String() string {
	switch h {
	case hostRead:
		return "read"
	case hostWrite:
		return "write"
	case hostNone:
		return "none"
	}
	return "read_write"
}

// globalInfo is the registration of a //dgen:global declaration.
type globalInfo struct {
	id         string
	size       int64 // of the element type
	imageScope bool
	access     hostAccess
	prog       *programInfo // for image scope: the program that owns it, or nil
}

// specConstInfo is the registration of a //dgen:specconst declaration.
type specConstInfo struct {
	id, name string
	def      string // the default as an OpenCL C literal
}

// The hooks through which rt/codegen registers declarations.
func init() {
	link.RegisterGlobal = registerGlobal
	link.RegisterSpecConst = registerSpecConst
	link.RegisterProgram = registerProgram
	link.RegisterKernel = registerKernel
	link.RegisterAllocSite = func(h any, id, name string) any {
		info := registerSite(id, name)
		h.(interface{ bind(*allocSiteInfo) }).bind(info)
		return info
	}
}

func registerGlobal(h any, g link.Global) any {
	info := &globalInfo{id: g.ID, size: g.Size, imageScope: g.ImageScope, access: hostAccess(g.HostAccess)}
	h.(interface{ bind(*globalInfo) }).bind(info)
	return info
}

func registerSpecConst(h any, c link.SpecConst, def any) any {
	info := &specConstInfo{id: c.ID, name: c.Name, def: c.Default}
	h.(interface{ bind(*specConstInfo, any) }).bind(info, def)
	return info
}

func registerProgram(h any, p link.Program) any {
	img := &progcache.Image{ID: p.ID, Name: p.Name, Source: p.Image, Options: p.Options, SpecConsts: []progcache.SpecValue{},
		Origin: "the //dgen:program directive of " + p.ID}
	for _, d := range p.SpecConsts {
		sc := d.(*specConstInfo)
		img.SpecConsts = append(img.SpecConsts, progcache.SpecValue{Name: sc.name, Value: sc.def})
	}
	slices.SortFunc(img.SpecConsts, func(a, b progcache.SpecValue) int { return strings.Compare(a.Name, b.Name) })
	info := &programInfo{image: img, stale: checkSources(p.ID, p.Sources)}
	for _, d := range p.Owns {
		d.(*globalInfo).prog = info
	}
	h.(*Program).info = info
	return info
}

func registerKernel(k link.Kernel) any {
	prog := k.Program.(*programInfo)
	info := &kernelInfo{id: k.ID, prog: prog, params: k.Params, key: progcache.NewKernelKey(prog.image, k.Name)}
	for _, d := range k.Globals {
		info.globals = append(info.globals, d.(*globalInfo))
	}
	return info
}

// Program is a device image declared with //dgen:program. Its generated
// code registers the image; Build returns it built for a context.
type Program struct {
	info *programInfo
}

// registration returns the program's registration, or an error wrapping
// ErrNotGenerated or ErrStale.
func (p *Program) registration() (*programInfo, error) {
	if p == nil || p.info == nil {
		return nil, fmt.Errorf("program: %w", errNotRegistered)
	}
	if p.info.stale != nil {
		return nil, p.info.stale
	}
	return p.info, nil
}

// Build returns the program built for every device of c through the
// context's program cache (memory, then disk, then a build).
func (p *Program) Build(c *Context) (*BuiltProgram, error) {
	info, err := p.registration()
	if err != nil {
		return nil, err
	}
	return c.programFor(info.image)
}

// Acquire returns the spec's kernel for q's device from the context's fast
// kernel cache (building its program on first use), locked for setting
// arguments: the caller sets them, then calls Launch, which unlocks it.
func (info *kernelInfo) Acquire(q *Queue) (*Kernel, error) {
	if info.prog.stale != nil {
		return nil, fmt.Errorf("kernel %s: %w", info.id, info.prog.stale)
	}
	if q == nil {
		return nil, fmt.Errorf("kernel %s: %w: nil queue", info.id, ErrInvalidArgument)
	}
	ck, err := q.ctx.pc.Acquire(info.key, q.dev.index)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", info.id, err)
	}
	kern := ck.Object()
	if kern.decl != info {
		// First use of this kernel object for the spec: check that the
		// generated code and the image agree, and keep the cache's kernel
		// for Launch to unlock.
		if want := info.params + len(info.globals); kern.nargs != want {
			ck.Unlock()
			return nil, fmt.Errorf("kernel %s: %w: %q takes %d arguments, the spec %d: run go generate", info.id, ErrInvalidArgument, info.key.Name(), kern.nargs, want)
		}
		kern.decl, kern.slot = info, ck
	}
	return kern, nil
}

// Launch binds the hidden device-global arguments of kern, launches it over
// r after wait with an event and unlocks it. setErr is the first error of
// setting the arguments, if any: then nothing is launched and the error is
// returned.
func (info *kernelInfo) Launch(q *Queue, kern *Kernel, r Range, setErr error, wait []*Event) (*Event, error) {
	if kern == nil || kern.slot == nil {
		return nil, fmt.Errorf("enqueue %s: %w: no kernel from Acquire", info.id, ErrInvalidArgument)
	}
	defer kern.slot.Unlock()
	if err := info.prepare(q, kern, setErr); err != nil {
		return nil, err
	}
	// The trace's call site is the user's: two frames above this method's
	// caller, codegen.KernelDecl.Launch, is the caller of the generated
	// EnqueueEvent.
	return q.launch(kern, r, wait, 2)
}

// Submit is Launch without an event: what the generated Enqueue calls.
func (info *kernelInfo) Submit(q *Queue, kern *Kernel, r Range, setErr error, wait []*Event) error {
	if kern == nil || kern.slot == nil {
		return fmt.Errorf("enqueue %s: %w: no kernel from Acquire", info.id, ErrInvalidArgument)
	}
	defer kern.slot.Unlock()
	if err := info.prepare(q, kern, setErr); err != nil {
		return err
	}
	// As for Launch: two frames above codegen.KernelDecl.Submit is the
	// caller of the generated Enqueue.
	return q.submit(kern, r, wait, 2)
}

// prepare returns setErr, wrapped, or binds the hidden arguments of kern.
func (info *kernelInfo) prepare(q *Queue, kern *Kernel, setErr error) error {
	if setErr != nil {
		return fmt.Errorf("enqueue %s: %w", info.id, setErr)
	}
	if q == nil {
		return fmt.Errorf("enqueue %s: %w: nil queue", info.id, ErrInvalidArgument)
	}
	if len(info.globals) > 0 {
		if err := kern.bindHidden(q); err != nil {
			return fmt.Errorf("enqueue %s: %w", info.id, err)
		}
	}
	return nil
}

// bindHidden sets the hidden arguments to the storage of the kernel's
// device globals on q's device. Called with the kernel locked.
func (kern *Kernel) bindHidden(q *Queue) error {
	dev := q.dev.index
	if kern.hidden == nil {
		kern.hidden = make([][]*Mem, len(q.ctx.devices))
	}
	mems := kern.hidden[dev]
	if mems == nil {
		for _, g := range kern.decl.globals {
			m, err := q.globalMem(g, kern.decl.prog)
			if err != nil {
				return err
			}
			mems = append(mems, m)
		}
		kern.hidden[dev] = mems
	}
	base := kern.decl.params
	for i, m := range mems {
		if err := kern.SetBuffer(base+i, m); err != nil {
			if q.ctx.closed.Load() {
				// Close released the storage that the kernel kept.
				return fmt.Errorf("%w: %w", ErrClosed, err)
			}
			return err
		}
	}
	return nil
}

// SpecConst is a specialization constant declared with //dgen:specconst: the
// kernel source sees it as a macro of its name. T is a number type.
type SpecConst[T any] struct {
	info *specConstInfo
	def  T
}

func (s *SpecConst[T]) bind(info *specConstInfo, def any) {
	s.info, s.def = info, def.(T)
}

// SetSpecConst sets the value of s on every queue of c: programs that use
// it are built (once per distinct value) with the macro defined to v, and
// launches of their kernels from then on use that build.
func SetSpecConst[T any](c *Context, s *SpecConst[T], v T) error {
	if s == nil || s.info == nil {
		return fmt.Errorf("set specialization constant: %w", errNotRegistered)
	}
	lit, err := SpecLiteral(v)
	if err != nil {
		return fmt.Errorf("set specialization constant %s: %w", s.info.id, err)
	}
	return c.SetSpecValue(s.info.name, lit)
}

// Default returns the constant's default value.
func (s *SpecConst[T]) Default() T { return s.def }

// declState is a context's storage of device globals.
type declState struct {
	mu      sync.Mutex
	globals map[globalKey]*globalSlot
	host    map[*globalInfo][]byte // image-scope globals in no program, in host memory
}

type globalKey struct {
	g    *globalInfo
	prog *programInfo // nil unless image scope
	dev  int
}

// globalSlot is the storage of one global on one device, made once: the
// goroutine that made the slot allocates and zeroes it outside the
// declarations' lock, and others wait for it on done.
type globalSlot struct {
	done chan struct{}
	m    *Mem
	err  error
}

// releaseDecls frees the storage of device globals. Close calls it once
// no call is in progress, so no slot is being made.
func (c *Context) releaseDecls() error {
	c.decls.mu.Lock()
	defer c.decls.mu.Unlock()
	var errs []error
	for _, s := range c.decls.globals {
		if s.m != nil {
			errs = append(errs, s.m.Free())
		}
	}
	c.decls.globals, c.decls.host = nil, nil
	return errors.Join(errs...)
}

// Local is the size of a __local kernel parameter: Len elements of T.
type Local[T any] struct {
	Len int
}

// Bytes returns the size in bytes.
func (l Local[T]) Bytes() int { return l.Len * int(elemSize[T]()) }
