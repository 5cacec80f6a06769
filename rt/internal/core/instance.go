package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// Kernel instances: how launches of generated specs scale with goroutines.
//
// Setting a kernel's arguments mutates the kernel object (an OpenCL
// cl_kernel, a CUDA kernel's argument memory), so two goroutines must never
// set up and launch one object at once. Rather than lock one shared object
// across the driver call, every launching goroutine works on an instance of
// its own: a kernel object made from the cached program (progcache's
// Kernel.Spawn) with a launch record of its own.
//
// The cache keeps one kernel object per (program variant, kernel, device),
// the prototype: it is never launched by a spec, it tells how many
// arguments the kernel takes, and it holds a pool of spare instances. An
// instance is owned by exactly one of: a queue's slot (Queue.specs, where
// it parks between launches), its prototype's pool, or the goroutine that
// acquired it, from Acquire until park after Submit or Launch. Taking an
// instance from a slot is one atomic swap and parking it one compare-and-
// swap, so a goroutine launching on a queue of its own takes no lock and
// allocates nothing. A slot is chosen by a hash of the spec and of the
// launch's own specialization-constant values (speclaunch.go); an
// instance whose slot is taken parks in the slot's pair (index^1), where
// a launch that misses its own slot looks next. Only when goroutines share
// a queue, or more specs and values than that meet on a pair of slots, do
// instances go through the pool, whose mutex guards a slice and is never
// held across a driver call.
//
// A goroutine that panics between Acquire and Submit keeps its instance;
// nothing is locked, and the next launch takes another. Eviction releases a
// prototype and its pool; a parked instance of an evicted prototype is
// released when its slot is next used, and every instance at Close.

// specHit is a kernel instance of a spec, parked in a queue's slot: ck is
// the cache's kernel (the prototype) it was made from, under the
// specialization-constant generation gen and the launch's own values args
// (speclaunch.go); epoch is the cache's epoch when ck was last found
// current (progcache's CurrentSince); slot is the index in q.specs where
// it parks, or where that is taken, at slot^1. It lives in the instance
// (Kernel.hit), and only the instance's owner changes it: the goroutine
// that took it from a slot or pool, before it parks it again.
type specHit struct {
	d     *desc.Kernel
	ck    *progcache.Kernel[*prototype]
	gen   uint64
	epoch uint64
	k     *Kernel
	q     *Queue
	slot  int
	args  SpecArgs
}

// specSlot returns the index in q.specs of d's slot.
func (q *Queue) specSlot(d *desc.Kernel) int {
	return int(uintptr(unsafe.Pointer(d)) * 0x9E3779B97F4A7C15 >> 61)
}

// kernelPool holds a prototype's spare instances.
type kernelPool struct {
	mu   sync.Mutex // guards free and dead; never held across a driver call
	free []*Kernel
	dead bool // the prototype was released: instances given back are released
}

// get returns a spare instance, or nil.
func (p *kernelPool) get() *Kernel {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if n == 0 {
		return nil
	}
	k := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	return k
}

// put keeps k as a spare instance, or releases it if the prototype is gone.
func (p *kernelPool) put(k *Kernel) {
	p.mu.Lock()
	if !p.dead {
		p.free = append(p.free, k)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	k.ctx.releaseInstance(k)
}

// kill releases the spare instances and makes put release later ones.
func (p *kernelPool) kill() {
	p.mu.Lock()
	free := p.free
	p.free, p.dead = nil, true
	p.mu.Unlock()
	for _, k := range free {
		k.ctx.releaseInstance(k)
	}
}

// Acquire returns a kernel instance of the spec d for q's device, owned
// by the caller until Submit or Launch parks it: the one parked in q's slot
// when it is current, else a spare one or a new one from the context's
// kernel cache (building the program on first use).
//
// A spec whose fields give specialization-constant values launches through
// AcquireSpec instead (speclaunch.go); every launch of one spec takes the
// same of the two.
func Acquire(q *Queue, d *desc.Kernel) (*Kernel, error) {
	if q == nil {
		return nil, fmt.Errorf("kernel %s: %w: nil queue", d.ID, ErrInvalidArgument)
	}
	return q.acquire(context.Background(), d)
}

// AcquireContext is Acquire bounded by ctx: a ctx that is done is an
// error, and ctx bounds the build of the program, or the wait for another
// goroutine's or process's (progcache's KernelContext).
func AcquireContext(ctx context.Context, q *Queue, d *desc.Kernel) (*Kernel, error) {
	if q == nil {
		return nil, fmt.Errorf("kernel %s: %w: nil queue", d.ID, ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	return q.acquire(ctx, d)
}

// acquire is Acquire and AcquireContext for a q that is not nil: the
// instance parked in d's slot when it is current, else acquireMiss.
func (q *Queue) acquire(ctx context.Context, d *desc.Kernel) (*Kernel, error) {
	i := q.specSlot(d)
	h := q.specs[i].Swap(nil)
	if h != nil && h.d == d && q.ctx.cache.pc.CurrentSince(h.ck, h.gen, &h.epoch) {
		h.k.setErr = nil
		return h.k, nil
	}
	var none SpecArgs
	return q.acquireMiss(ctx, d, &none, i, h)
}

// acquireMiss is the path of Acquire and AcquireSpec when slot i did not
// hold an instance for d launched with a: h, what it held (or nil), goes
// back there while it still serves its own spec; the pair slot i^1, where
// an instance parks when its own is taken, is looked at; else the kernel
// cache. So two specs, or two sets of values, whose slots collide each
// keep an instance parked.
func (q *Queue) acquireMiss(ctx context.Context, d *desc.Kernel, a *SpecArgs, i int, h *specHit) (*Kernel, error) {
	if h != nil {
		q.putBack(i, h)
	}
	if h := q.specs[i^1].Swap(nil); h != nil {
		if h.d == d && h.args == *a && q.ctx.cache.pc.CurrentSince(h.ck, h.gen, &h.epoch) {
			h.k.setErr = nil
			return h.k, nil
		}
		q.putBack(i^1, h)
	}
	return q.acquireSlow(ctx, d, a, i)
}

// putBack parks h, taken from slot i by a launch it cannot serve, there
// again while its prototype is current, and otherwise disposes of it.
func (q *Queue) putBack(i int, h *specHit) {
	if q.ctx.cache.pc.Current(h.ck, h.gen) && q.specs[i].CompareAndSwap(nil, h) {
		return
	}
	h.unpark()
}

// acquireSlow is the path of Acquire and AcquireSpec through the kernel
// cache, for the values a (and a tuning queue's candidate); the instance
// parks in slot (or its pair).
func (q *Queue) acquireSlow(ctx context.Context, d *desc.Kernel, a *SpecArgs, slot int) (*Kernel, error) {
	key, err := d.Key()
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	if len(d.Extensions) > 0 {
		if err := checkExtensions(d, q.dev); err != nil {
			return nil, err
		}
	}
	over, err := q.specOverrides(d, a) // speclaunch.go
	if err != nil {
		return nil, err
	}
	gen, epoch := q.ctx.cache.pc.Gen(), q.ctx.cache.pc.Epoch()
	// Held until the instance exists: another goroutine's build cannot
	// evict the program and doom its prototype before Spawn.
	ck, err := q.ctx.cache.pc.KernelHeld(ctx, key, q.dev.index, over)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	defer q.ctx.cache.pc.Unhold(ck)
	proto := ck.Object()
	// Check that the generated code and the image agree.
	if want := d.Params + len(d.Globals); proto.nargs != want {
		return nil, fmt.Errorf("kernel %s: %w: %q takes %d arguments, the spec %d: run go generate", d.ID, ErrInvalidArgument, d.Name, proto.nargs, want)
	}
	k := proto.pool.get()
	if k == nil {
		if k, err = q.ctx.newInstance(ck); err != nil {
			return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
		}
	}
	if k.decl != d {
		if k.decl != nil && !slices.Equal(k.decl.Globals, d.Globals) {
			k.hidden = nil // specs of one kernel of one image bind the same globals
		}
		k.decl, k.nglobals = d, int32(len(d.Globals))
	}
	// The caller owns k: no slot or pool reads k.hit until park.
	k.hit = specHit{d: d, ck: ck, gen: gen, epoch: epoch, k: k, q: q, slot: slot, args: *a}
	k.specs = ck.Specs()
	k.label = proto.variantLabel(k.specs)
	k.setErr = nil
	return k, nil
}

// park gives k, acquired by Acquire, back to its queue's slot, or the pair
// of that slot, or to its prototype's pool if other instances are parked
// in both.
func (k *Kernel) park() {
	h := &k.hit
	if s := &h.q.specs; !s[h.slot].CompareAndSwap(nil, h) && !s[h.slot^1].CompareAndSwap(nil, h) {
		h.ck.Object().pool.put(k)
	}
}

// unpark disposes of h, an instance taken from a slot that cannot serve
// the spec that looked: one of another spec that shares the slot, or of
// other specialization-constant values, goes to its prototype's pool; one
// of an evicted prototype is released.
func (h *specHit) unpark() {
	if h.ck.Doomed() {
		h.k.ctx.releaseInstance(h.k)
		return
	}
	h.ck.Object().pool.put(h.k)
}

// newInstance makes an instance of the cached kernel ck (spawn) and lists
// it in the context's instances, which Close releases.
func (c *Context) newInstance(ck *progcache.Kernel[*prototype]) (*Kernel, error) {
	k := new(Kernel)
	if err := c.spawn(ck, &k.kernelObject); err != nil {
		return nil, err
	}
	c.instances.mu.Lock()
	if c.instances.m == nil {
		c.instances.m = make(map[*Kernel]struct{})
	}
	c.instances.m[k] = struct{}{}
	c.instances.mu.Unlock()
	if c.closed.Load() { // Close may have released the set before k joined it
		c.releaseInstance(k)
		return nil, fmt.Errorf("new kernel %q: %w", k.name, c.closedError())
	}
	return k, nil
}

// spawn makes k a kernel object of the cached kernel ck, from its program,
// with the prototype's work-group info, which is the same for every object
// of the kernel.
func (c *Context) spawn(ck *progcache.Kernel[*prototype], k *kernelObject) error {
	proto := ck.Object()
	return ck.Spawn(func(p driver.Program) error {
		return (&builtProgram{ctx: c, drv: p, name: proto.prog}).initObject(k, proto.name, proto.wg)
	})
}

// instanceSet is every kernel instance of a context not yet released, for
// Close.
type instanceSet struct {
	mu sync.Mutex // guards m
	m  map[*Kernel]struct{}
}

// releaseInstance releases the instance k.
func (c *Context) releaseInstance(k *Kernel) {
	c.instances.mu.Lock()
	delete(c.instances.m, k)
	c.instances.mu.Unlock()
	if err := k.release(); err != nil {
		// No caller waits for an instance's release: log it.
		c.log().Warn("dgen: release of a kernel instance", "kernel", k.name, "err", err)
	}
}

// checkExtensions returns an error wrapping ErrNoKernel, naming the
// kernel, the device and the extension, when dev lacks an extension the
// kernel d needs: its definition is behind "#if defined(ext)", so the
// device's compiler leaves it out.
func checkExtensions(d *desc.Kernel, dev *Device) error {
	for _, need := range d.Extensions {
		if !slices.ContainsFunc(strings.Split(need, "|"), func(e string) bool { return slices.Contains(dev.Extensions, e) }) {
			what := "extension " + need
			if strings.Contains(need, "|") {
				what = "any of the extensions " + strings.ReplaceAll(need, "|", ", ")
			}
			return fmt.Errorf("kernel %s (%s): device %s lacks %s, under which the kernel is defined: %w", d.ID, d.Name, dev.Name, what, ErrNoKernel)
		}
	}
	return nil
}
