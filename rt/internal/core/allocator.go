package core

import (
	"context"
	"errors"
	"fmt"
	rtrace "runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// devAlloc is the allocator of one device of a context, with the queue on
// which it forces new blocks to be resident.
type devAlloc struct {
	ctx      *Context
	dev      *Device
	q        driver.Queue // private: a residency write never waits for user work
	a        *alloc.Allocator
	resident bool // the backend commits new buffers at once: no residency write
}

// block is what the allocator holds: a driver buffer, with its identity
// as a Mem records it (Mem.setDriver), which every Mem that allocMem makes
// for the block copies: a kernel that holds the block as an argument from
// an earlier allocation need not set it again.
type block struct {
	drv  driver.Buffer
	mem  Mem
	size int64 // bytes charged to the device's budget (budget.go)
}

// Alloc implements alloc.Device: a driver buffer, made resident, where
// the backend does not commit it at once, by a 4-byte blocking write, so
// that a lazy driver (NVIDIA's OpenCL commits memory at first use) reports
// exhaustion here rather than in a later kernel.
func (d *devAlloc) Alloc(size int64) (alloc.Block, error) {
	if err := d.dev.charge(size); err != nil {
		return nil, fmt.Errorf("allocate %w", err)
	}
	drv, err := d.ctx.drv.NewBuffer(size)
	if err != nil {
		d.dev.refund(size)
		return nil, fmt.Errorf("allocate %d bytes on %q: %w", size, d.dev.Name, err)
	}
	d.ctx.counters.driverAllocs.Add(1)
	if !d.resident {
		var zero uint32
		// A blocking write creates no event.
		if _, err := d.q.WriteBuffer(drv, true, 0, 4, unsafe.Pointer(&zero), nil); err != nil {
			if rerr := drv.Release(); rerr == nil {
				d.ctx.counters.driverReleases.Add(1)
			}
			d.dev.refund(size)
			return nil, fmt.Errorf("make %d bytes resident on %q: %w", size, d.dev.Name, err)
		}
	}
	b := &block{drv: drv, size: size}
	b.mem.setDriver(drv) // every Mem of the block copies its identity
	return b, nil
}

// Release implements alloc.Device. The block's bytes leave the device's
// budget whether or not the driver's release succeeds: the allocator
// releases a block once, and forgets it.
func (d *devAlloc) Release(b alloc.Block) error {
	blk := b.(*block)
	err := blk.drv.Release()
	d.dev.refund(blk.size)
	if err != nil {
		return fmt.Errorf("release buffer on %q: %w", d.dev.Name, err)
	}
	d.ctx.counters.driverReleases.Add(1)
	return nil
}

// MaxAlloc implements alloc.Device.
func (d *devAlloc) MaxAlloc() int64 { return d.dev.MaxAllocSize }

// allocator returns the allocator of q's device, creating it on first
// use. The caller is inside q's enter, and q is not nil.
func (c *Context) allocator(q *Queue) (*alloc.Allocator, error) {
	slot := &c.allocs.slots[q.dev.index]
	if d := slot.Load(); d != nil {
		return d.a, nil
	}
	// The driver queue is made with no lock held: goroutines that race to
	// make the device's allocator each make one, and all but the first to
	// take mu release theirs.
	dq, err := c.drv.NewQueue(q.dev.index, false)
	if err != nil {
		return nil, fmt.Errorf("create allocator on %q: queue: %w", q.dev.Name, err)
	}
	d := &devAlloc{ctx: c, dev: q.dev, q: dq}
	if rc, ok := c.drv.(driver.ResidentContext); ok {
		d.resident = rc.BuffersResident()
	}
	cfg := c.settings.alloc
	cfg.Hook = allocTracer{q.dev.tr}
	if d.a, err = alloc.New(d, cfg); err != nil {
		dq.Release()
		return nil, fmt.Errorf("create allocator on %q: %w", q.dev.Name, err)
	}
	c.allocs.mu.Lock()
	won := slot.Load() == nil && !c.closed.Load()
	if won {
		slot.Store(d)
	}
	c.allocs.mu.Unlock()
	if won {
		return d.a, nil
	}
	dq.Release()
	if w := slot.Load(); w != nil {
		return w.a, nil
	}
	return nil, c.closedError()
}

// allocMem allocates size bytes under tag on q's device through its
// allocator; past Config.MemoryLimit it waits for frees under ctx, and a
// nil ctx (the plain forms) waits for none (budget.go). skip is the
// number of frames between its caller and the user's call, for the Go
// tracer's log.
func allocMem(ctx context.Context, q *Queue, tag alloc.Tag, size int64, skip int) (*Mem, error) {
	m, err := allocOnce(q, tag, size, skip+1)
	if err != nil && q != nil && errors.Is(err, ErrMemoryLimit) {
		err = q.ctx.waitForMemory(ctx, q.dev, err, func() (err error) {
			m, err = allocOnce(q, tag, size, skip+3) // the closure and waitForMemory
			return err
		})
	}
	return m, err
}

// allocOnce is one try of allocMem.
func allocOnce(q *Queue, tag alloc.Tag, size int64, skip int) (*Mem, error) {
	if q == nil {
		return nil, fmt.Errorf("allocate %d bytes: %w: nil queue", size, ErrInvalidArgument)
	}
	if err := q.dev.tooLarge(size); err != nil {
		return nil, fmt.Errorf("allocate %d bytes for %s: %w", size, tagName(uint32(tag)), err)
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("allocate %d bytes for %s: %w", size, tagName(uint32(tag)), err)
	}
	defer q.exit()
	a, err := q.ctx.allocator(q)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes for %s: %w", size, tagName(uint32(tag)), err)
	}
	h, err := a.AllocOn(q, tag, size)
	if err != nil {
		return nil, q.ctx.failed(q, fmt.Errorf("allocate %d bytes for %s on %q: %w", size, tagName(uint32(tag)), q.dev.Name, err))
	}
	blk, err := h.Block()
	if err != nil { // cannot happen for a fresh allocation
		return nil, fmt.Errorf("allocate %d bytes for %s on %q: %w", size, tagName(uint32(tag)), q.dev.Name, err)
	}
	b := blk.(*block)
	// A new Mem for every allocation: a *Mem kept from an earlier use of the
	// block stays freed, and fails with ErrFreed rather than free or bind
	// this one.
	m := &Mem{ctx: q.ctx, drv: b.drv, id: b.mem.id, handle: b.mem.handle, native: b.mem.native,
		size: size, h: h, pooled: true, release: releaseToAllocator}
	if r := q.rec.Load(); r != nil {
		r.own(m)
	}
	if rtrace.IsEnabled() {
		q.goTraceAlloc(tagName(uint32(tag)), size, skip+1)
	}
	return m, nil
}

// releaseToAllocator gives m's block back to its allocator with the uses
// recorded on it. After Context.Close the block is gone already and there is
// nothing to do.
func releaseToAllocator(m *Mem) error {
	var buf [4]alloc.Use
	ctx, size, uses := m.ctx, m.size, m.uses.appendTo(buf[:0])
	// The uses known complete need no order: the block keeps no queue
	// that is done with it (a released queue's are all complete).
	uses = slices.DeleteFunc(uses, useComplete)
	err := m.h.FreeAfter(uses)
	if err == nil {
		ctx.wakeBudgets() // a waiter may reuse the block
	}
	if err != nil && ctx.closed.Load() && errors.Is(err, alloc.ErrFreed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("free %d bytes: %w", size, err)
	}
	return nil
}

// Alloc allocates a buffer of n elements of T under the site's tag on q's
// device. It is served from the tag's free block when that block holds
// between n and 2n elements' worth of bytes, and otherwise from the
// driver, the new block made resident at once so that out of memory shows
// here (errors.Is(err, ErrOutOfMemory), after held blocks were released
// and the allocation retried). A request above the device's maximum
// allocation is an error wrapping ErrTooLarge; a site that dgen did not
// register is one wrapping ErrNotGenerated. Free gives the buffer back to
// the tag's free list. Alloc never waits for the device: a block reused
// on another queue than its last use's makes that queue wait, on the
// device, for that use. Past Config.MemoryLimit it returns the blocks held
// in the device's free lists and, if that is not enough, fails at once
// with an error wrapping ErrMemoryLimit; AllocContext waits for frees.
func (s *AllocSite[T]) Alloc(q *Queue, n int) (Buffer[T], error) {
	return s.alloc(nil, q, n)
}

// AllocContext is Alloc, but past Config.MemoryLimit, once the blocks held
// in the device's free lists are returned, it waits for other allocations
// to be freed until the memory fits or ctx is done: then it fails with an
// error wrapping ErrMemoryLimit and ctx.Err(). A request larger than the
// limit fails at once. Every Free on the device ends a wait, to try again.
func (s *AllocSite[T]) AllocContext(ctx context.Context, q *Queue, n int) (Buffer[T], error) {
	return s.alloc(ctx, q, n)
}

// alloc is Alloc and AllocContext; a nil ctx waits for no memory.
func (s *AllocSite[T]) alloc(ctx context.Context, q *Queue, n int) (Buffer[T], error) {
	info, err := s.registration()
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate %d elements: %w", n, err)
	}
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate for %s: %w", info.Name, err)
	}
	m, err := allocMem(ctx, q, alloc.Tag(info.Tag()), size, 1) // the user calls rt.AllocSite.Alloc, through alloc
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

// Alloc allocates an untagged buffer of n elements of T on q's device
// from the allocator's size-class pool (or, under the "tagged"
// Config.AllocPolicy, from the driver). Free gives it back to the pool.
// Errors are as for AllocSite.Alloc. NewBuffer, by contrast, always asks
// the driver.
func Alloc[T any](q *Queue, n int) (Buffer[T], error) {
	return allocUntagged[T](nil, q, n)
}

// AllocContext is Alloc, waiting under ctx past Config.MemoryLimit as
// AllocSite.AllocContext does.
func AllocContext[T any](ctx context.Context, q *Queue, n int) (Buffer[T], error) {
	return allocUntagged[T](ctx, q, n)
}

// allocUntagged is Alloc and AllocContext; a nil ctx waits for no memory.
func allocUntagged[T any](ctx context.Context, q *Queue, n int) (Buffer[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate: %w", err)
	}
	m, err := allocMem(ctx, q, alloc.NoTag, size, 1) // the user calls rt.Alloc, through allocUntagged
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

// ReleaseHeld gives every block held in the allocators' free lists back to
// the driver. Buffers in use are not affected.
func (c *Context) ReleaseHeld() error {
	if c == nil {
		return fmt.Errorf("release held memory: %w: nil context", ErrInvalidArgument)
	}
	var errs []error
	for i := range c.allocs.slots {
		if d := c.allocs.slots[i].Load(); d != nil {
			if err := d.a.ReleaseAll(); err != nil {
				errs = append(errs, fmt.Errorf("release held memory on %q: %w", d.dev.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

var _ alloc.Device = (*devAlloc)(nil)

// allocators are a context's allocators, one slot per device, each made
// on the device's first allocation. A slot goes from nil to its
// allocator once, under mu, and is read without it; Close takes mu once
// it has set closed, so that no allocator is installed after it looked.
type allocators struct {
	mu    sync.Mutex  // held to install a slot; never across a driver call
	slots []allocSlot // by device index; the slice is OpenConfig's
}

// allocSlot is one device's lazily created allocator.
type allocSlot = atomic.Pointer[devAlloc]

// allocTracer reports the allocator's decisions as memory events of its
// device's trace handle: driver allocations and releases, and reuses from
// the free list (Pooled). It is one pointer, which an alloc.Hook holds
// without a copy.
type allocTracer struct{ tr *trace.Device }

// mem describes e as a memory event; pooled is set for the free list.
func (h allocTracer) mem(e *alloc.Event, pooled bool) trace.Mem {
	return trace.Mem{Tag: uint64(e.Tag), Size: e.BlockSize, Pooled: pooled, TagName: tagName(uint32(e.Tag))}
}

// DriverAlloc implements alloc.Hook.
func (h allocTracer) DriverAlloc(e alloc.Event) {
	if h.tr.MemTraced() {
		h.tr.MemAlloc(h.mem(&e, false))
	}
}

// Reuse implements alloc.Hook: the allocation's memory event, if memory
// events have a subscriber, in one frame below the allocator's.
func (h allocTracer) Reuse(e alloc.Event) {
	if h.tr.MemTraced() {
		h.tr.MemAlloc(h.mem(&e, true))
	}
}

// DriverRelease implements alloc.Hook.
func (h allocTracer) DriverRelease(e alloc.Event) {
	if h.tr.MemTraced() {
		h.tr.MemRelease(h.mem(&e, false))
	}
}
