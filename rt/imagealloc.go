package rt

import (
	"fmt"
	"slices"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/stats"
)

// Images from allocation sites. Each device has one allocator per kind,
// format, size and access of image, so that a tag's free block is always
// an image of the request's shape: the free list is keyed by tag, kind,
// format and dimensions, and the allocator's stream-ordered reuse,
// statistics hooks and Close serve images as they serve buffers.

// poolKey is the shape of images that one allocator holds, on one device.
type poolKey struct {
	dev             int
	kind            driver.ImageKind
	fmt             driver.ImageFormat
	w, h, d, layers int
	acc             driver.MemAccess
}

// imageDevice is the alloc.Device of one poolKey: it creates the images.
type imageDevice struct {
	devAlloc // Completed and Order
	ic       driver.ImageContext
	desc     driver.ImageDesc
}

// Alloc implements alloc.Device.
func (d *imageDevice) Alloc(size int64) (alloc.Block, error) {
	drv, err := d.ic.NewImage(d.desc)
	if err != nil {
		return nil, fmt.Errorf("create %s on %q: %w", d.desc.Kind, d.dev.Name, err)
	}
	d.ctx.driverAllocs.Add(1)
	b := &block{drv: drv}
	b.mem.id = bufferIDs.Add(1)
	return b, nil
}

// MaxAlloc implements alloc.Device: the driver checks an image's size.
func (d *imageDevice) MaxAlloc() int64 { return 0 }

// imagePool returns the allocator of images of h's shape on q's device.
func (c *Context) imagePool(q *Queue, ic driver.ImageContext, h *imageHandle) (*alloc.Allocator, error) {
	dd := h.driverDesc()
	key := poolKey{dev: q.dev.index, kind: h.kind, fmt: dd.Format, w: dd.Width, h: dd.Height, d: dd.Depth, layers: dd.Layers, acc: h.acc}
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	if a := c.images.pools[key]; a != nil {
		return a, nil
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	cfg := c.allocCfg
	cfg.BestFit = false // one shape per allocator: the tag is the key's last part
	cfg.Hook = allocTracer{c: c, dev: q.dev.index}
	a, err := alloc.New(&imageDevice{devAlloc: devAlloc{ctx: c, dev: q.dev}, ic: ic, desc: dd}, cfg)
	if err != nil {
		return nil, err
	}
	if c.images.pools == nil {
		c.images.pools = map[poolKey]*alloc.Allocator{}
	}
	c.images.pools[key] = a
	return a, nil
}

// AllocImage allocates an image as d describes under the allocation
// site's tag on q's device (declare the site as rt.AllocSite[rt.Image]
// with //dgen:alloc). It is served from the free list of the tag and the
// image's kind, format, size and access when that holds an image, in
// stream order as AllocSite.Alloc serves buffers, and otherwise created.
// Free gives it back. Errors are as for NewImage; an image1d_buffer_t,
// which lies over a buffer, has no allocation site.
func AllocImage(q *Queue, s *AllocSite[Image], d ImageDesc) (Image, error) {
	var zero Image
	op := "allocate " + imageOp(d.Kind)
	info, err := s.registration()
	if err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	if q == nil {
		return zero, fmt.Errorf("%s: %w: nil queue", op, ErrInvalidArgument)
	}
	if d.Kind == "image1d_buffer_t" {
		return zero, fmt.Errorf("%s for %s: %w: an image over a buffer has no allocation site; use NewImage", op, info.Name, ErrInvalidArgument)
	}
	c := q.ctx
	if err := c.enter(); err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	ic, h, err := c.newImageHandle(op+" for "+info.Name, d)
	if err != nil {
		return zero, err
	}
	a, err := c.imagePool(q, ic, h)
	if err != nil {
		return zero, fmt.Errorf("%s for %s: %w", op, info.Name, err)
	}
	ah, err := a.AllocOn(q, alloc.Tag(info.Tag()), h.bytes())
	if err != nil {
		return zero, fmt.Errorf("%s %s for %s on %q: %w", op, sizeString(h.dims), info.Name, q.dev.Name, err)
	}
	blk, err := ah.Block()
	if err != nil {
		return zero, fmt.Errorf("%s for %s: %w", op, info.Name, err)
	}
	b := blk.(*block)
	m := &b.mem
	m.ctx, m.drv, m.size, m.h, m.pooled, m.release = c, b.drv, h.bytes(), ah, true, releaseToAllocator
	m.uses.reset()
	m.freed.Store(false)
	h.m, h.gen = m, m.gen.Load()
	return Image{h}, nil
}

// addImageStats adds the statistics of the image allocators to those of
// the devices' buffer allocators in ds (allocStats), so that a tag's
// counts, and the totals, count its images too. A device whose only
// allocations are images gets an entry of its own, in device order.
func (c *Context) addImageStats(ds []stats.DeviceAlloc) []stats.DeviceAlloc {
	c.images.mu.Lock()
	byDev := map[int][]alloc.Stats{}
	for k, a := range c.images.pools {
		byDev[k.dev] = append(byDev[k.dev], a.Stats())
	}
	c.images.mu.Unlock()
	if len(byDev) == 0 {
		return ds
	}
	for dev, all := range byDev {
		i := slices.IndexFunc(ds, func(d stats.DeviceAlloc) bool { return d.Index == dev })
		if i < 0 {
			ds = append(ds, stats.DeviceAlloc{Device: c.devices[dev].Name, Index: dev, Stats: alloc.Stats{Total: alloc.TagStats{Name: "total"}}})
			i = len(ds) - 1
		}
		for _, s := range all {
			ds[i].Stats = mergeStats(ds[i].Stats, s)
		}
	}
	slices.SortFunc(ds, func(a, b stats.DeviceAlloc) int { return a.Index - b.Index })
	return ds
}

// mergeStats returns the statistics of two allocators of one device
// together; peaks are the larger of the two.
func mergeStats(a, b alloc.Stats) alloc.Stats {
	tags := slices.Clone(a.Tags)
	for _, t := range b.Tags {
		i, found := slices.BinarySearchFunc(tags, t.Tag, func(x alloc.TagStats, tag alloc.Tag) int { return int(x.Tag) - int(tag) })
		if !found {
			tags = slices.Insert(tags, i, alloc.TagStats{Tag: t.Tag, Name: t.Name})
		}
		tags[i].Add(t)
	}
	a.Tags = tags
	a.Total.Add(b.Total)
	a.OOMRetries += b.OOMRetries
	return a
}
