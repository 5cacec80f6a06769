package progcache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
)

// Kernel is the cache's kernel of one (program variant, kernel name,
// device): the kernel value that the Builder made for it (rt's core: the
// prototype of the kernel's instances, which is never launched), tied to
// its program's entry. The cache makes one per key, however many
// goroutines ask at once, and releases its value once, through the
// Builder's ReleaseKernel, when the kernel's program is evicted or the
// cache closed: the kernel is then doomed, and Spawn makes nothing more of
// it.
//
// A Kernel takes no lock. Its value, read through Object, is the caller's
// to read for what is fixed once it is made; the driver objects it holds
// are released when the kernel is doomed, so a caller uses them only while
// it holds the kernel (KernelHeld to Unhold), which no eviction dooms, or
// through objects of its own (Spawn's, which hold their own reference to
// the program). Eviction and Close never wait for a caller: a goroutine
// that holds one kernel and asks the cache for another, whose build would
// evict the first, cannot deadlock.
type Kernel[K Object] struct {
	k      K
	entry  *entry[K]
	doomed atomic.Bool // evicted or closed: k is released, once, by the kill that set it
	name   string
	rel    func(K) error // the Builder's ReleaseKernel
}

// Object returns the cache's kernel value, the Builder's; see Kernel for
// what a caller may do with it.
func (ck *Kernel[K]) Object() K { return ck.k }

// kill takes ck out of use and releases its value, once.
func (ck *Kernel[K]) kill() error {
	if ck.doomed.Swap(true) {
		return nil
	}
	return ck.rel(ck.k)
}

// Current reports whether ck is still what Kernel would return for its
// key under the specialization-constant generation gen (read with Gen
// before the Kernel call that returned ck): the values have not changed
// since and ck was not evicted. It takes no lock, and marks ck's program
// used, as a fast cache hit does. A kernel evicted just after Current
// returns stays safe to launch through objects made by Spawn, which hold
// their own reference to the program.
func (c *Cache[K]) Current(ck *Kernel[K], gen uint64) bool {
	if c.specGen.Load() != gen || ck.doomed.Load() {
		return false
	}
	if !ck.entry.used.Load() {
		ck.entry.used.Store(true)
	}
	return true
}

// Epoch returns the cache's epoch, which changes when the values of
// specialization constants change, when kernels are evicted, and when the
// LRU clears its used marks: read before the Kernel call whose result a
// caller keeps, it is what CurrentSince first takes.
func (c *Cache[K]) Epoch() uint64 { return c.epoch.Load() }

// CurrentSince is Current for a caller that keeps the epoch at which ck
// was last found current in *epoch: while the cache's epoch is the same,
// nothing that Current looks at has changed, and it reports true after one
// atomic load, without touching ck (a launch loop's hit then costs one
// cache line, not three). Otherwise it asks Current and, if ck is still
// current, keeps the epoch read before that.
func (c *Cache[K]) CurrentSince(ck *Kernel[K], gen uint64, epoch *uint64) bool {
	e := c.epoch.Load()
	if e == *epoch {
		return true
	}
	if !c.Current(ck, gen) {
		return false
	}
	*epoch = e
	return true
}

// Specs returns the specialization-constant values of ck's program, sorted
// by name: every constant its image uses. The caller must not modify them.
func (ck *Kernel[K]) Specs() []SpecValue { return ck.entry.specs }

// Doomed reports whether ck was evicted or its cache closed: its program
// serves no new kernel objects.
func (ck *Kernel[K]) Doomed() bool { return ck.doomed.Load() }

// Spawn calls mk with the driver program of ck, for a caller that makes a
// kernel object of its own of it (one per launching goroutine, so that
// launches from several goroutines share no object and no lock), and
// returns mk's error. It holds a reference to the program during mk, so
// that an eviction meanwhile cannot release it; once ck is evicted it
// returns an error wrapping ErrClosed and does not call mk. What mk makes
// is the caller's: the cache neither tracks nor releases it.
func (ck *Kernel[K]) Spawn(mk func(p driver.Program) error) error {
	sp := ck.entry.sp
	if ck.doomed.Load() || !sp.tryRef() {
		return fmt.Errorf("new kernel %q: %w: evicted from the cache", ck.name, ErrClosed)
	}
	defer sp.drop()
	return mk(sp.drv)
}

// fastTable is the immutable fast kernel cache: slots[key index] lists
// the kernels of that key per (specialization-constant set, device).
// Writers copy it under Cache.mu and publish it atomically.
type fastTable[K Object] struct {
	slots [][]fastEntry[K]
}

type fastEntry[K Object] struct {
	specs *specSet
	dev   int
	ck    *Kernel[K]
	// gen is the generation of the cache's values (Cache.specGen) in
	// which the entry last served: the first hit after the values changed
	// found a program variant in memory, and counts as a memory hit.
	gen *atomic.Uint64
}

// countReuse counts the first hit of e since the values last changed as a
// memory hit.
func (c *Cache[K]) countReuse(e *fastEntry[K]) {
	g := c.specGen.Load()
	if old := e.gen.Load(); old != g && e.gen.CompareAndSwap(old, g) {
		c.memHits.Add(1)
	}
}

// Kernel returns the kernel of key for device dev under the cache's
// current specialization-constant values, building its program and
// creating the kernel on first use. A hit takes no lock and allocates
// nothing: two atomic loads and an array lookup. The kernel is shared,
// and its value is never launched (see Kernel). A negative dev (the
// caller's device is not one of the cache's) is an error wrapping
// ErrInvalidArgument.
func (c *Cache[K]) Kernel(key *KernelKey, dev int) (*Kernel[K], error) {
	return c.KernelWithContext(context.Background(), key, dev, nil)
}

// KernelContext is Kernel bounded by ctx: when ctx is done before the
// kernel's program is built, it returns an error wrapping ctx.Err(), and
// the build goes on for the others that wait for it, as ProgramContext's.
func (c *Cache[K]) KernelContext(ctx context.Context, key *KernelKey, dev int) (*Kernel[K], error) {
	return c.KernelWithContext(ctx, key, dev, nil)
}

// KernelWith is Kernel under the cache's values with over in their place:
// a launch's own values, which no other caller sees. The variant's
// program is built once, as Kernel builds one, and kept under its values
// (the cache's keys hold every value the image uses). With no values in
// over it is Kernel.
func (c *Cache[K]) KernelWith(key *KernelKey, dev int, over []SpecValue) (*Kernel[K], error) {
	return c.KernelWithContext(context.Background(), key, dev, over)
}

// KernelWithContext is KernelWith bounded by ctx, as KernelContext is
// Kernel.
func (c *Cache[K]) KernelWithContext(ctx context.Context, key *KernelKey, dev int, over []SpecValue) (*Kernel[K], error) {
	var (
		ck  *Kernel[K]
		err error
	)
	if len(over) == 0 {
		if ck := c.fastKernel(key, dev, c.spec.Load()); ck != nil {
			return ck, nil
		}
		gen := c.specGen.Load() // before the values: a change between them counts once more, never less
		ck, err = c.kernelSlow(ctx, key, dev, gen, c.spec.Load())
	} else {
		gen := c.specGen.Load()
		specs := c.overlay(c.spec.Load(), over)
		if ck := c.fastKernel(key, dev, specs); ck != nil {
			return ck, nil
		}
		ck, err = c.kernelSlow(ctx, key, dev, gen, specs)
	}
	if err != nil {
		return nil, err
	}
	c.unpin(ck.entry)
	return ck, nil
}

// KernelHeld is KernelWithContext for a caller that makes something of the
// kernel before it lets go, such as an instance through Spawn: the kernel's
// program is held in the cache, and no eviction takes it, or dooms the
// kernel, until the caller's Unhold, which every KernelHeld without an
// error needs. So a goroutine whose program another goroutine's build
// would evict is never refused the kernel it asked for. Close still
// closes a held kernel: then Spawn returns an error wrapping ErrClosed.
//
// The cache can go above its threshold by the programs held, at most one
// per goroutine between KernelHeld and Unhold; the last Unhold of a
// program evicts what the threshold asks. A hit takes no lock and
// allocates nothing, as Kernel's; the hold adds an atomic add on the
// program's entry here and one in Unhold.
func (c *Cache[K]) KernelHeld(ctx context.Context, key *KernelKey, dev int, over []SpecValue) (*Kernel[K], error) {
	gen := c.specGen.Load()
	specs := c.spec.Load()
	if len(over) > 0 {
		specs = c.overlay(specs, over)
	}
	if ck := c.fastKernel(key, dev, specs); ck != nil && c.pinFast(ck) {
		return ck, nil
	}
	return c.kernelSlow(ctx, key, dev, gen, specs)
}

// Unhold lets go of a kernel that KernelHeld returned.
func (c *Cache[K]) Unhold(ck *Kernel[K]) { c.unpin(ck.entry) }

// fastKernel is the fast kernel cache's lookup of key for device dev
// under the value set specs: the kernel, or nil.
func (c *Cache[K]) fastKernel(key *KernelKey, dev int, specs *specSet) *Kernel[K] {
	if key == nil {
		return nil
	}
	t := c.fast.Load()
	if key.index >= len(t.slots) {
		return nil
	}
	slot := t.slots[key.index]
	for i := range slot {
		if e := &slot[i]; e.specs == specs && e.dev == dev {
			if !e.ck.entry.used.Load() {
				e.ck.entry.used.Store(true)
			}
			c.countReuse(e)
			return e.ck
		}
	}
	return nil
}

// Gen returns the generation of the specialization-constant values: read
// before the Kernel call whose result a caller keeps, it is what Current
// and CurrentSince take with the kernel returned.
func (c *Cache[K]) Gen() uint64 { return c.specGen.Load() }

// kernelSlow is the miss path of Kernel and KernelWith under the value set
// specs, read after the generation gen: the program through
// getOrBuildContext, then the kernel of (program, name, device), then a new
// fast table. It returns the kernel with its entry held (entry.pins) from
// getOrBuildContext on, so that no other goroutine's eviction comes between
// the build and the kernel object; the caller lets go with unpin.
func (c *Cache[K]) kernelSlow(ctx context.Context, key *KernelKey, dev int, gen uint64, specs *specSet) (*Kernel[K], error) {
	if key == nil || key.image == nil {
		return nil, fmt.Errorf("get kernel: %w: nil kernel key", ErrInvalidArgument)
	}
	if dev < 0 {
		return nil, fmt.Errorf("get kernel %q: %w: queue not of this context", key.name, ErrInvalidArgument)
	}
	if err := c.b.Enter(key.image); err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	defer c.b.Exit()
	c.kernelMisses.Add(1)
	k := c.keyOf(key.image, specs)
	if err := k.checkSet(); err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	e, err := c.getOrBuildContext(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	defer e.sp.drop()
	ck, err := c.kernelOf(e, k.name, key.name, dev)
	if err == nil {
		err = c.publish(key, dev, gen, specs, e, ck)
	}
	if err != nil {
		c.unpin(e)
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	return ck, nil
}

// publish adds ck, the kernel of key on device dev under the value set
// specs in e's program, to the fast kernel cache, unless it is there. e is
// held, so that only Close can have taken it out of the cache.
func (c *Cache[K]) publish(key *KernelKey, dev int, gen uint64, specs *specSet, e *entry[K], ck *Kernel[K]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || !e.inLRU {
		return ErrClosed
	}
	old := c.fast.Load()
	n := max(len(old.slots), key.index+1)
	t := &fastTable[K]{slots: make([][]fastEntry[K], n)}
	copy(t.slots, old.slots)
	for _, fe := range t.slots[key.index] {
		if fe.specs == specs && fe.dev == dev {
			return nil // one kernel object per (program, name, device): it is ck
		}
	}
	slot := make([]fastEntry[K], 0, len(t.slots[key.index])+1)
	slot = append(slot, t.slots[key.index]...)
	fe := fastEntry[K]{specs: specs, dev: dev, ck: ck, gen: new(atomic.Uint64)}
	fe.gen.Store(gen)
	t.slots[key.index] = append(slot, fe)
	c.fast.Store(t)
	return nil
}

// kernelID names a kernel object of a program: one per kernel name and
// device.
type kernelID struct {
	name string
	dev  int
}

// making is the single-flight creation of one kernel object: its outcome,
// once done is closed, is the cached kernel or the stored error.
type making[K Object] struct {
	done chan struct{}
	ck   *Kernel[K]
	err  error
}

// kernelOf returns the kernel called name of e's program, the program
// called prog, on device dev, creating it on first use: one kernel object
// per (program, name, device), however many goroutines ask at once. A
// failure is stored and returned to later callers, except out of memory,
// after which the cache evicts every other program, retries once and,
// failing again, lets the next caller try anew.
func (c *Cache[K]) kernelOf(e *entry[K], prog, name string, dev int) (*Kernel[K], error) {
	id := kernelID{name, dev}
	c.mu.Lock()
	if km, ok := e.making[id]; ok {
		c.mu.Unlock()
		<-km.done
		return km.ck, km.err
	}
	km := &making[K]{done: make(chan struct{})}
	if e.making == nil {
		e.making = make(map[kernelID]*making[K])
	}
	e.making[id] = km
	c.mu.Unlock()
	defer close(km.done)

	kern, err := c.b.NewKernel(e.sp.drv, prog, name)
	if err != nil && errors.Is(err, driver.ErrOutOfMemory) {
		c.oomFlushes.Add(1)
		c.Logf("out of memory creating kernel %s: evict every other program and retry", name)
		c.evictAll(e)
		kern, err = c.b.NewKernel(e.sp.drv, prog, name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil:
		km.err = err
		if errors.Is(err, driver.ErrOutOfMemory) {
			delete(e.making, id)
		}
	case !e.inLRU || c.closed: // closed meanwhile: e is held, so no eviction took it
		c.b.ReleaseKernel(kern)
		km.err = ErrClosed
		delete(e.making, id)
	default:
		km.ck = &Kernel[K]{k: kern, entry: e, name: name, rel: c.b.ReleaseKernel}
		e.kernels = append(e.kernels, km.ck)
	}
	return km.ck, km.err
}

// dropFast publishes a fast table without the kernels of e. Called with
// Cache.mu held.
func (c *Cache[K]) dropFast(e *entry[K]) {
	old := c.fast.Load()
	t := &fastTable[K]{slots: make([][]fastEntry[K], len(old.slots))}
	for i, slot := range old.slots {
		var kept []fastEntry[K]
		for _, fe := range slot {
			if fe.ck.entry != e {
				kept = append(kept, fe)
			}
		}
		t.slots[i] = kept
	}
	c.fast.Store(t)
}
