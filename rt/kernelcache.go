package rt

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// kernelKey names a kernel of a device image for the fast kernel cache.
// Registration of a kernel spec makes one, once, with newKernelKey, which
// gives it the dense index that makes a cache hit an array lookup.
type kernelKey struct {
	image *programImage
	name  string
	index int
}

var kernelKeys atomic.Int32

// newKernelKey returns the key of the kernel called name in img. Each
// call takes a new index: call it once per kernel, at registration.
func newKernelKey(img *programImage, name string) *kernelKey {
	return &kernelKey{image: img, name: name, index: int(kernelKeys.Add(1) - 1)}
}

// cachedKernel is a kernel object owned by a context's kernel cache: one
// per (program, kernel name, device). Setting arguments mutates a kernel,
// so a goroutine holds the cachedKernel's lock from setting the arguments
// until the launch has been enqueued (the launch captures them), and
// concurrent enqueues of one kernel spec on one device take turns; the
// lock is held for microseconds, not for the kernel's run.
//
// Eviction and Close never wait for the lock: they mark the kernel doomed,
// and whoever holds the lock last releases it. A goroutine that holds one
// kernel and asks the cache for another, which evicts the first, therefore
// cannot deadlock, and a test that fails while holding a kernel does not
// make Close hang.
type cachedKernel struct {
	mu     sync.Mutex
	k      *Kernel
	entry  *progEntry
	dev    int
	doomed atomic.Bool // evicted or closed: release k once unlocked
	dead   bool        // k released. Guarded by mu.
}

// lock locks ck for setting arguments and launching, and returns its
// kernel. An evicted kernel is an error wrapping ErrClosed: get a new one
// from kernelFor, or use acquireKernel, which does.
func (ck *cachedKernel) lock() (*Kernel, error) {
	ck.mu.Lock()
	if ck.dead || ck.doomed.Load() {
		ck.unlock()
		return nil, fmt.Errorf("lock kernel %q: %w: evicted from the cache", ck.k.name, ErrClosed)
	}
	return ck.k, nil
}

// unlock unlocks ck once its launch has been enqueued, releasing the
// kernel if it was evicted meanwhile.
func (ck *cachedKernel) unlock() {
	if ck.doomed.Load() {
		ck.finish()
	}
	ck.mu.Unlock()
	// kill may have failed to take the lock between the load above and
	// the unlock: then no one else saw it held and doomed.
	if ck.doomed.Load() && ck.mu.TryLock() {
		ck.finish()
		ck.mu.Unlock()
	}
}

// kill takes ck out of use: it releases the kernel now if no goroutine
// holds it, and otherwise leaves that to the holder's unlock. It never
// waits.
func (ck *cachedKernel) kill() error {
	ck.doomed.Store(true)
	if !ck.mu.TryLock() {
		return nil
	}
	err := ck.finish()
	ck.mu.Unlock()
	return err
}

// finish releases the kernel of a doomed ck once. Called with mu held.
func (ck *cachedKernel) finish() error {
	if ck.dead {
		return nil
	}
	ck.dead = true
	return ck.k.Release()
}

// fastTable is the immutable fast kernel cache: slots[key index] lists
// the kernels of that key per (specialization-constant set, device).
// Writers copy it under progCache.mu and publish it atomically.
type fastTable struct {
	slots [][]fastEntry
}

type fastEntry struct {
	specs *specSet
	dev   int
	ck    *cachedKernel
}

// kernelFor returns the cached kernel of key for q's device under the
// context's current specialization-constant values, building its program
// and creating the kernel on first use. A hit takes no lock and allocates
// nothing: two atomic loads and an array lookup. The kernel is shared:
// lock it (cachedKernel.Lock) around setting arguments and launching, or
// use acquireKernel.
func (c *Context) kernelFor(key *kernelKey, q *Queue) (*cachedKernel, error) {
	if key != nil && q != nil {
		t := c.pc.fast.Load()
		if key.index < len(t.slots) {
			specs := c.pc.spec.Load()
			dev := q.dev.index
			slot := t.slots[key.index]
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
	return c.kernelSlow(key, q)
}

// acquireKernel returns the cached kernel of key for q's device, locked:
// set its arguments, launch it on q, then unlock it. A registered kernel
// spec's Acquire, which generated Enqueue methods call through
// rt/codegen, uses it.
func (c *Context) acquireKernel(key *kernelKey, q *Queue) (*cachedKernel, error) {
	var err error
	for range 4 {
		var ck *cachedKernel
		if ck, err = c.kernelFor(key, q); err != nil {
			return nil, err
		}
		ck.mu.Lock()
		if !ck.dead && !ck.doomed.Load() {
			return ck, nil
		}
		ck.unlock()
		err = fmt.Errorf("acquire kernel %q: %w: evicted from the cache", key.name, ErrClosed)
	}
	return nil, err
}

// kernelSlow is the miss path of kernelFor: the program through
// getOrBuild, then the kernel of (program, name, device), then a new
// fast table.
func (c *Context) kernelSlow(key *kernelKey, q *Queue) (*cachedKernel, error) {
	if key == nil || key.image == nil {
		return nil, fmt.Errorf("get kernel: %w: nil kernel key", ErrInvalidArgument)
	}
	if q == nil {
		return nil, fmt.Errorf("get kernel %q: %w: nil queue", key.name, ErrInvalidArgument)
	}
	if err := c.sameContext("the queue", q.ctx); err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if err := key.image.checkOptions(); err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	pc := &c.pc
	pc.kernelMisses.Add(1)
	specs := pc.spec.Load()
	k := pc.keyOf(key.image, specs)
	e, err := pc.getOrBuild(k)
	if err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}
	defer e.sp.drop()
	dev := q.dev.index

	ck, err := pc.kernelOf(e, &BuiltProgram{ctx: c, drv: e.sp.drv, name: k.name, options: k.opts}, key.name, dev)
	if err != nil {
		return nil, fmt.Errorf("get kernel %q: %w", key.name, err)
	}

	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !e.inLRU || pc.closed {
		return nil, fmt.Errorf("get kernel %q: %w: evicted from the cache", key.name, ErrClosed)
	}
	old := pc.fast.Load()
	n := max(len(old.slots), key.index+1)
	t := &fastTable{slots: make([][]fastEntry, n)}
	copy(t.slots, old.slots)
	for _, fe := range t.slots[key.index] {
		if fe.specs == specs && fe.dev == dev {
			return fe.ck, nil
		}
	}
	slot := make([]fastEntry, 0, len(t.slots[key.index])+1)
	slot = append(slot, t.slots[key.index]...)
	t.slots[key.index] = append(slot, fastEntry{specs: specs, dev: dev, ck: ck})
	pc.fast.Store(t)
	return ck, nil
}

// kernelID names a kernel object of a program: one per kernel name and
// device.
type kernelID struct {
	name string
	dev  int
}

// kernelMaking is the single-flight creation of one kernel object: its
// outcome, once done is closed, is the cached kernel or the stored error.
type kernelMaking struct {
	done chan struct{}
	ck   *cachedKernel
	err  error
}

// kernelOf returns the kernel called name of e's program p on device dev,
// creating it on first use: one kernel object per (program, name, device),
// however many goroutines ask at once. A failure is stored and returned to
// later callers, except out of memory, after which the cache evicts every
// other program, retries once and, failing again, lets the next caller try
// anew.
func (pc *progCache) kernelOf(e *progEntry, p *BuiltProgram, name string, dev int) (*cachedKernel, error) {
	id := kernelID{name, dev}
	pc.mu.Lock()
	if km, ok := e.making[id]; ok {
		pc.mu.Unlock()
		<-km.done
		return km.ck, km.err
	}
	km := &kernelMaking{done: make(chan struct{})}
	if e.making == nil {
		e.making = make(map[kernelID]*kernelMaking)
	}
	e.making[id] = km
	pc.mu.Unlock()
	defer close(km.done)

	kern, err := p.Kernel(name)
	if err != nil && errors.Is(err, ErrOutOfMemory) {
		pc.oomFlushes.Add(1)
		pc.tracef("out of memory creating kernel %s: evict every other program and retry", name)
		pc.evictAll(e)
		kern, err = p.Kernel(name)
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	switch {
	case err != nil:
		km.err = err
		if errors.Is(err, ErrOutOfMemory) {
			delete(e.making, id)
		}
	case !e.inLRU || pc.closed: // evicted or closed meanwhile
		kern.Release()
		km.err = fmt.Errorf("%w: evicted from the cache", ErrClosed)
		delete(e.making, id)
	default:
		km.ck = &cachedKernel{k: kern, entry: e, dev: dev}
		kern.cached = km.ck
		e.kernels = append(e.kernels, km.ck)
	}
	return km.ck, km.err
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
