package rt

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// KernelSpec names a kernel of a device image for the fast kernel cache.
// Create one per kernel, once (generated code keeps it in a package-level
// variable), with NewKernelSpec: registration gives it the dense index that
// makes a cache hit an array lookup.
type KernelSpec struct {
	image *ProgramImage
	name  string
	index int
}

var kernelSpecs atomic.Int32

// NewKernelSpec returns the spec of the kernel called name in img. Each
// call registers a new spec: call it once per kernel, from an init
// function or a package-level variable's initializer.
func NewKernelSpec(img *ProgramImage, name string) *KernelSpec {
	return &KernelSpec{image: img, name: name, index: int(kernelSpecs.Add(1) - 1)}
}

// Image returns the spec's device image.
func (s *KernelSpec) Image() *ProgramImage { return s.image }

// Name returns the kernel's name.
func (s *KernelSpec) Name() string { return s.name }

// CachedKernel is a kernel object owned by a context's kernel cache: one
// per (program, kernel name, device). Setting arguments mutates a kernel,
// so a goroutine holds the CachedKernel's lock from setting the arguments
// until the launch has been enqueued (the launch captures them), and
// concurrent enqueues of one kernel spec on one device take turns; the
// lock is held for microseconds, not for the kernel's run.
type CachedKernel struct {
	mu    sync.Mutex
	k     *Kernel
	entry *progEntry
	dev   int
	dead  bool // evicted; k released. Guarded by mu.
}

// Lock locks ck for setting arguments and launching, and returns its
// kernel. An evicted kernel is an error wrapping ErrClosed: get a new one
// from KernelFor, or use AcquireKernel, which does.
func (ck *CachedKernel) Lock() (*Kernel, error) {
	if ck == nil {
		return nil, fmt.Errorf("lock kernel: %w: nil cached kernel", ErrInvalidArgument)
	}
	ck.mu.Lock()
	if ck.dead {
		ck.mu.Unlock()
		return nil, fmt.Errorf("lock kernel %q: %w: evicted from the cache", ck.k.name, ErrClosed)
	}
	return ck.k, nil
}

// Kernel returns the kernel; use it only between Lock (or AcquireKernel)
// and Unlock.
func (ck *CachedKernel) Kernel() *Kernel {
	if ck == nil {
		return nil
	}
	return ck.k
}

// Unlock unlocks ck once its launch has been enqueued.
func (ck *CachedKernel) Unlock() {
	if ck != nil {
		ck.mu.Unlock()
	}
}

// kill releases the kernel once no goroutine holds it.
func (ck *CachedKernel) kill() error {
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ck.dead {
		return nil
	}
	ck.dead = true
	return ck.k.Release()
}

// fastTable is the immutable fast kernel cache: slots[spec index] lists
// the kernels of that spec per (specialization-constant set, device).
// Writers copy it under progCache.mu and publish it atomically.
type fastTable struct {
	slots [][]fastEntry
}

type fastEntry struct {
	specs *specSet
	dev   int
	ck    *CachedKernel
}

// KernelFor returns the cached kernel of spec for q's device under the
// context's current specialization-constant values, building its program
// and creating the kernel on first use. A hit takes no lock and allocates
// nothing: two atomic loads and an array lookup. The kernel is shared:
// lock it (CachedKernel.Lock) around setting arguments and launching, or
// use AcquireKernel.
func (c *Context) KernelFor(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	if c == nil {
		return nil, fmt.Errorf("get kernel: %w: nil context", ErrInvalidArgument)
	}
	if spec != nil && q != nil {
		t := c.pc.fast.Load()
		if spec.index < len(t.slots) {
			specs := c.pc.spec.Load()
			dev := q.dev.index
			slot := t.slots[spec.index]
			for i := range slot {
				if e := &slot[i]; e.specs == specs && e.dev == dev {
					if !e.ck.entry.used.Load() {
						e.ck.entry.used.Store(true)
					}
					return e.ck, nil
				}
			}
		}
	}
	return c.kernelSlow(spec, q)
}

// AcquireKernel returns the cached kernel of spec for q's device, locked:
// set its arguments, launch it on q, then Unlock it. It is what generated
// Enqueue methods call.
func (c *Context) AcquireKernel(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	var err error
	for range 4 {
		var ck *CachedKernel
		if ck, err = c.KernelFor(spec, q); err != nil {
			return nil, err
		}
		ck.mu.Lock()
		if !ck.dead {
			return ck, nil
		}
		ck.mu.Unlock()
		err = fmt.Errorf("acquire kernel %q: %w: evicted from the cache", spec.name, ErrClosed)
	}
	return nil, err
}

// kernelSlow is the miss path of KernelFor: the program through
// getOrBuild, then the kernel of (program, name, device), then a new
// fast table.
func (c *Context) kernelSlow(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	if spec == nil || spec.image == nil {
		return nil, fmt.Errorf("get kernel: %w: nil kernel spec", ErrInvalidArgument)
	}
	if q == nil {
		return nil, fmt.Errorf("get kernel %q: %w: nil queue", spec.name, ErrInvalidArgument)
	}
	if err := c.sameContext("the queue", q.ctx); err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", spec.name, err)
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if err := spec.image.checkOptions(); err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", spec.name, err)
	}
	pc := &c.pc
	pc.kernelMisses.Add(1)
	specs := pc.spec.Load()
	k := pc.keyOf(spec.image, specs)
	e, err := pc.getOrBuild(k)
	if err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", spec.name, err)
	}
	defer e.sp.drop()
	dev := q.dev.index

	// The kernel of (program, name, device), if another spec or spec set
	// made it already.
	pc.mu.Lock()
	ck := findKernel(e, spec.name, dev)
	pc.mu.Unlock()
	if ck == nil {
		p := &BuiltProgram{ctx: c, drv: e.sp.drv, name: k.name, options: k.opts}
		kern, err := p.Kernel(spec.name)
		if err != nil {
			return nil, fmt.Errorf("get kernel: %w", err)
		}
		pc.mu.Lock()
		if !e.inLRU || pc.closed { // evicted or closed meanwhile
			pc.mu.Unlock()
			kern.Release()
			return nil, fmt.Errorf("get kernel %q: %w: evicted from the cache", spec.name, ErrClosed)
		}
		if ck = findKernel(e, spec.name, dev); ck == nil {
			ck = &CachedKernel{k: kern, entry: e, dev: dev}
			kern.cached = ck
			e.kernels = append(e.kernels, ck)
			kern = nil
		}
		pc.mu.Unlock()
		if kern != nil {
			kern.Release()
		}
	}

	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !e.inLRU || pc.closed {
		return nil, fmt.Errorf("get kernel %q: %w: evicted from the cache", spec.name, ErrClosed)
	}
	old := pc.fast.Load()
	n := max(len(old.slots), spec.index+1)
	t := &fastTable{slots: make([][]fastEntry, n)}
	copy(t.slots, old.slots)
	for _, fe := range t.slots[spec.index] {
		if fe.specs == specs && fe.dev == dev {
			return fe.ck, nil
		}
	}
	slot := make([]fastEntry, 0, len(t.slots[spec.index])+1)
	slot = append(slot, t.slots[spec.index]...)
	t.slots[spec.index] = append(slot, fastEntry{specs: specs, dev: dev, ck: ck})
	pc.fast.Store(t)
	return ck, nil
}

func findKernel(e *progEntry, name string, dev int) *CachedKernel {
	for _, ck := range e.kernels {
		if ck.k.name == name && ck.dev == dev {
			return ck
		}
	}
	return nil
}

// dropFast publishes a fast table without the kernels of e. Called with
// progCache.mu held.
func (pc *progCache) dropFast(e *progEntry) {
	old := pc.fast.Load()
	t := &fastTable{slots: make([][]fastEntry, len(old.slots))}
	for i, slot := range old.slots {
		var kept []fastEntry
		for _, fe := range slot {
			if fe.ck.entry != e {
				kept = append(kept, fe)
			}
		}
		t.slots[i] = kept
	}
	pc.fast.Store(t)
}
