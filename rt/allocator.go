package rt

import (
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"

	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/alloc"
)

// AllocPolicy selects the allocator's policy.
type AllocPolicy string

// The allocator policies.
const (
	// PolicyFull is the tagged free list plus the untagged size-class pool
	// and release-and-retry on out of memory. It is the default.
	PolicyFull AllocPolicy = "full"
	// PolicyTaggedOnly is the tagged free list only, as Futhark's
	// allocator (2018) has it: untagged allocations go to the driver and
	// back, and out of memory is not retried.
	PolicyTaggedOnly AllocPolicy = "tagged"
	// PolicyBestFit is the policy Futhark's runtime moved to in 2020: one
	// free list across tags, every freed block held, and a request served
	// by the smallest held block that is large enough and has the request's
	// tag, is under 4096 bytes, or would be less than half empty (see
	// alloc.Config.BestFit). Release-and-retry on out of memory is on.
	PolicyBestFit AllocPolicy = "bestfit"
)

// AllocConfig configures the allocator of every device of a context.
type AllocConfig struct {
	// Policy is PolicyFull (also when empty), PolicyTaggedOnly or
	// PolicyBestFit.
	Policy AllocPolicy
	// MaxHeld, when positive, bounds the bytes that one device's allocator
	// holds in free lists; beyond it the least recently freed blocks are
	// released to the driver.
	MaxHeld int64
}

func (ac AllocConfig) policy() (alloc.Config, error) {
	var cfg alloc.Config
	switch ac.Policy {
	case "", PolicyFull:
	case PolicyTaggedOnly:
		cfg = alloc.SeedPolicy()
	case PolicyBestFit:
		cfg.BestFit = true
	default:
		return cfg, fmt.Errorf("allocator policy %q: %w: want %q, %q or %q", ac.Policy, ErrInvalidArgument, PolicyFull, PolicyTaggedOnly, PolicyBestFit)
	}
	if ac.MaxHeld < 0 {
		return cfg, fmt.Errorf("allocator bound of %d bytes held: %w: negative", ac.MaxHeld, ErrInvalidArgument)
	}
	cfg.MaxHeld = ac.MaxHeld
	cfg.IsOutOfMemory = isOutOfMemory
	cfg.TagName = func(t alloc.Tag) string { return TagName(uint32(t)) }
	return cfg, nil
}

// ErrTooLarge reports an allocation above the device's maximum single
// allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE). No driver call is made.
var ErrTooLarge = alloc.ErrTooLarge

func isOutOfMemory(err error) bool {
	return errors.Is(err, ErrOutOfMemory) || errors.Is(err, alloc.ErrDeviceOutOfMemory)
}

// devAlloc is the allocator of one device of a context, with the queue on
// which it forces new blocks to be resident.
type devAlloc struct {
	ctx *Context
	dev *Device
	q   driver.Queue // private: a residency write never waits for user work
	a   *alloc.Allocator
}

// block is what the allocator holds: a driver buffer, and the Mem that
// allocMem hands out for it, again at every reuse, so that a hit
// allocates nothing on the Go heap (Buffer.gen tells the Buffers of
// earlier uses apart).
type block struct {
	drv driver.Buffer
	mem Mem
}

// Alloc implements alloc.Device: a driver buffer, made resident by a
// 4-byte blocking write so that a lazy driver (NVIDIA commits memory at
// first use) reports exhaustion here rather than in a later kernel.
func (d *devAlloc) Alloc(size int64) (alloc.Block, error) {
	drv, err := d.ctx.drv.NewBuffer(size)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes on %q: %w", size, d.dev.Name, err)
	}
	d.ctx.driverAllocs.Add(1)
	var zero uint32
	// A blocking write creates no event.
	if _, err := d.q.WriteBuffer(drv, true, 0, 4, unsafe.Pointer(&zero), nil); err != nil {
		if rerr := drv.Release(); rerr == nil {
			d.ctx.driverReleases.Add(1)
		}
		return nil, fmt.Errorf("make %d bytes resident on %q: %w", size, d.dev.Name, err)
	}
	b := &block{drv: drv}
	b.mem.id = bufferIDs.Add(1) // allocMem keeps it: the block's buffer stays the same
	return b, nil
}

// Release implements alloc.Device.
func (d *devAlloc) Release(b alloc.Block) error {
	if err := b.(*block).drv.Release(); err != nil {
		return fmt.Errorf("release buffer on %q: %w", d.dev.Name, err)
	}
	d.ctx.driverReleases.Add(1)
	return nil
}

// MaxAlloc implements alloc.Device.
func (d *devAlloc) MaxAlloc() int64 { return d.dev.MaxAllocSize }

// allocator returns the allocator of q's device, creating it on first use.
func (c *Context) allocator(q *Queue) (*alloc.Allocator, error) {
	if q == nil {
		return nil, fmt.Errorf("allocate: %w: nil queue", ErrInvalidArgument)
	}
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("allocate: %w", err)
	}
	defer c.exit()
	slot := &c.allocs[q.dev.index]
	if d := slot.Load(); d != nil {
		return d.a, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := slot.Load(); d != nil {
		return d.a, nil
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("allocate: context: %w", ErrClosed)
	}
	dq, err := c.drv.NewQueue(q.dev.index, false)
	if err != nil {
		return nil, fmt.Errorf("create allocator on %q: queue: %w", q.dev.Name, err)
	}
	d := &devAlloc{ctx: c, dev: q.dev, q: dq}
	cfg := c.allocCfg
	cfg.Hook = allocTracer{c: c, dev: q.dev.index}
	if d.a, err = alloc.New(d, cfg); err != nil {
		dq.Release()
		return nil, fmt.Errorf("create allocator on %q: %w", q.dev.Name, err)
	}
	slot.Store(d)
	return d.a, nil
}

// allocMem allocates size bytes under tag on q's device through its
// allocator.
func allocMem(q *Queue, tag alloc.Tag, size int64) (*Mem, error) {
	if q == nil {
		return nil, fmt.Errorf("allocate %d bytes: %w: nil queue", size, ErrInvalidArgument)
	}
	if err := q.ctx.enter(); err != nil {
		return nil, fmt.Errorf("allocate %d bytes: %w", size, err)
	}
	defer q.ctx.exit()
	a, err := q.ctx.allocator(q)
	if err != nil {
		return nil, err
	}
	h, err := a.AllocOn(q, tag, size)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes for %s on %q: %w", size, TagName(uint32(tag)), q.dev.Name, err)
	}
	blk, err := h.Block()
	if err != nil { // cannot happen for a fresh allocation
		return nil, fmt.Errorf("allocate %d bytes for %s on %q: %w", size, TagName(uint32(tag)), q.dev.Name, err)
	}
	b := blk.(*block)
	m := &b.mem
	// m is free: its last Free returned it, with the block, to the allocator.
	m.ctx, m.drv, m.size, m.h, m.pooled, m.release = q.ctx, b.drv, size, h, true, releaseToAllocator
	m.uses.reset()
	m.freed.Store(false)
	return m, nil
}

// releaseToAllocator gives m's block back to its allocator with the uses
// recorded on it. After Context.Close the block is gone already and there is
// nothing to do.
func releaseToAllocator(m *Mem) error {
	var buf [4]alloc.Use
	// Once FreeAfter returns, allocMem may hand m out again: read it first.
	ctx, size, uses := m.ctx, m.size, m.uses.appendTo(buf[:0])
	err := m.h.FreeAfter(uses)
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
// between n and 2n elements' worth of bytes, and otherwise from the driver,
// the new block made resident at once so that out of memory shows here
// (errors.Is(err, ErrOutOfMemory), after held blocks were released and the
// allocation retried). A request above the device's maximum allocation is an
// error wrapping ErrTooLarge; a site that dgen did not register is one
// wrapping ErrNotGenerated. Free gives the buffer back to the tag's free list.
func (s *AllocSite[T]) Alloc(q *Queue, n int) (Buffer[T], error) {
	info, err := s.registration()
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate %d elements: %w", n, err)
	}
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate for %s: %w", info.name, err)
	}
	m, err := allocMem(q, alloc.Tag(info.tag), size)
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

// Alloc allocates an untagged buffer of n elements of T on q's device
// from the allocator's size-class pool (or, under PolicyTaggedOnly, from the
// driver). Free gives it back to the pool. Errors are as for
// AllocSite.Alloc. NewBuffer, by contrast, always asks the driver.
func Alloc[T any](q *Queue, n int) (Buffer[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate: %w", err)
	}
	m, err := allocMem(q, alloc.NoTag, size)
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

// AllocStats is a snapshot of a context's device memory statistics.
type AllocStats struct {
	// Devices has the allocator statistics of every device of the context
	// whose allocator has been used, in device order. Tag names come from
	// TagName.
	Devices []DeviceAllocStats
	// DriverAllocs and DriverReleases count every driver buffer created and
	// released through the context: by the allocators, NewBuffer and NewMem.
	DriverAllocs, DriverReleases uint64
}

// DeviceAllocStats are the statistics of one device's allocator.
type DeviceAllocStats struct {
	Device *Device
	alloc.Stats
}

// Total returns the statistics of every device together (Peak is the
// largest device peak).
func (s AllocStats) Total() alloc.TagStats {
	t := alloc.TagStats{Name: "total"}
	for _, d := range s.Devices {
		addTagStats(&t, d.Stats.Total)
	}
	return t
}

// Tag returns the statistics of one tag over every device.
func (s AllocStats) Tag(tag uint32) alloc.TagStats {
	t := alloc.TagStats{Tag: alloc.Tag(tag), Name: TagName(tag)}
	for _, d := range s.Devices {
		addTagStats(&t, d.Stats.Tag(alloc.Tag(tag)))
	}
	return t
}

// addTagStats adds the counts of x to t; Peak is the larger of the two.
func addTagStats(t *alloc.TagStats, x alloc.TagStats) {
	t.Requests += x.Requests
	t.Reuses += x.Reuses
	t.DriverAllocs += x.DriverAllocs
	t.DriverReleases += x.DriverReleases
	t.Failures += x.Failures
	t.Held += x.Held
	t.HeldBlocks += x.HeldBlocks
	t.InUse += x.InUse
	t.Ordered += x.Ordered
	t.Peak = max(t.Peak, x.Peak)
	t.PeakInUse = max(t.PeakInUse, x.PeakInUse)
}

// String formats the statistics as a table, one line per device and tag.
func (s AllocStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %-20s %9s %9s %7s %8s %12s %12s %12s\n", "device", "tag", "requests", "reuses", "allocs", "releases", "held", "in use", "peak")
	for _, d := range s.Devices {
		for _, t := range append(d.Tags, d.Stats.Total) {
			fmt.Fprintf(&b, "%-24.24s %-20.20s %9d %9d %7d %8d %12d %12d %12d\n", d.Device.Name, t.Name, t.Requests, t.Reuses, t.DriverAllocs, t.DriverReleases, t.Held, t.InUse, t.Peak)
		}
	}
	fmt.Fprintf(&b, "driver buffers created %d, released %d\n", s.DriverAllocs, s.DriverReleases)
	return b.String()
}

// AllocStats returns the context's allocator statistics. It works after
// Close too.
func (c *Context) AllocStats() AllocStats {
	var s AllocStats
	if c == nil {
		return s
	}
	for i := range c.allocs {
		if d := c.allocs[i].Load(); d != nil {
			s.Devices = append(s.Devices, DeviceAllocStats{Device: d.dev, Stats: d.a.Stats()})
		}
	}
	s.Devices = c.addImageStats(s.Devices) // imagealloc.go
	s.DriverAllocs = c.driverAllocs.Load()
	s.DriverReleases = c.driverReleases.Load()
	return s
}

// ReleaseHeld gives every block held in the allocators' free lists back to
// the driver. Buffers in use are not affected.
func (c *Context) ReleaseHeld() error {
	if c == nil {
		return fmt.Errorf("release held memory: %w: nil context", ErrInvalidArgument)
	}
	var errs []error
	for i := range c.allocs {
		if d := c.allocs[i].Load(); d != nil {
			if err := d.a.ReleaseAll(); err != nil {
				errs = append(errs, fmt.Errorf("release held memory on %q: %w", d.dev.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// closeAllocators releases every allocator's blocks, held or in use, and
// its queue. Called by Close with c.closed set.
func (c *Context) closeAllocators() []error {
	c.mu.Lock() // no allocator is being created
	c.mu.Unlock()
	var errs []error
	for i := range c.allocs {
		d := c.allocs[i].Load()
		if d == nil {
			continue
		}
		if err := d.a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator on %q: %w", d.dev.Name, err))
		}
		if err := d.q.Finish(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator queue on %q: %w", d.dev.Name, err))
		}
		if err := d.q.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator queue on %q: %w", d.dev.Name, err))
		}
	}
	return errs
}

var _ alloc.Device = (*devAlloc)(nil)

// allocSlot is one device's lazily created allocator.
type allocSlot = atomic.Pointer[devAlloc]

// allocTracer reports the allocator's decisions as memory events: driver
// allocations and releases, and reuses from the free list (Pooled).
type allocTracer struct {
	c   *Context
	dev int
}

func (h allocTracer) event(e alloc.Event, pooled bool) trace.Mem {
	m := trace.Mem{Tag: uint64(e.Tag), Size: e.BlockSize, Pooled: pooled}
	if h.c.tr.Enabled() {
		m.TagName = TagName(uint32(e.Tag))
	}
	return m
}

// DriverAlloc implements alloc.Hook.
func (h allocTracer) DriverAlloc(e alloc.Event) { h.c.traceMem(h.dev, h.event(e, false), true) }

// Reuse implements alloc.Hook.
func (h allocTracer) Reuse(e alloc.Event) { h.c.traceMem(h.dev, h.event(e, true), true) }

// DriverRelease implements alloc.Hook.
func (h allocTracer) DriverRelease(e alloc.Event) { h.c.traceMem(h.dev, h.event(e, false), false) }
