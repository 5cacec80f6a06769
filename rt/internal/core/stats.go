package core

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/stats"
)

// The context's statistics (rt/stats): what its program cache and the
// remote tier beneath it did, and what its allocators, of buffers and of
// images, hold and did.

// contextCounters are a context's atomic counters that no part of its own
// keeps, only ever added to, which Stats reads.
type contextCounters struct {
	driverAllocs, driverReleases atomic.Uint64 // memory from the driver, for stats.Alloc (allocator.go)
	tuneTimed, tuneRecords       atomic.Int64  // SpecConst.Tune's (tune.go)
}

// Stats returns the context's statistics: what its program cache did
// (Cache), what its allocators hold and did (Alloc), its queues and its
// queue pool (Queues), and the events not yet released (Events). It works
// after Close too, and on a nil context returns zero statistics.
func (c *Context) Stats() stats.Context {
	if c == nil {
		return stats.Context{}
	}
	return stats.Context{Cache: c.cacheStats(), Alloc: c.allocStats(), Queues: c.queueStats(), Events: c.live.liveEvents()}
}

// queueStats returns a snapshot of the context's queues and its pool.
func (c *Context) queueStats() stats.Queues {
	s := stats.Queues{Queues: c.queues.len()}
	p := &c.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	s.PoolQueues, s.PoolMax = len(p.queues), p.max
	for _, q := range p.queues {
		h := int(q.gate.holders.Load())
		s.Acquired += h
		if h > 1 {
			s.Shared++
		}
	}
	return s
}

// cacheStats returns the counters of the context's program cache.
func (c *Context) cacheStats() stats.Cache {
	if c == nil {
		return stats.Cache{}
	}
	s := c.cache.pc.Stats()
	return stats.Cache{
		Builds: s.Builds, BuildTime: time.Duration(c.cache.buildNanos.Load()), DiskHits: s.DiskHits, MemHits: s.MemHits, BuildErrors: s.BuildErrors,
		Retries: s.Retries, Evictions: s.Evictions, OOMFlushes: s.OOMFlushes, KernelMisses: s.KernelMisses,
		Programs: s.Programs, Bytes: s.Bytes, Remote: c.remoteStats(), Tuned: c.counters.tuneTimed.Load(), TuneRecords: c.counters.tuneRecords.Load(),
	}
}

// remoteStats returns the remote tier's counters; zero without one.
func (c *Context) remoteStats() stats.Remote {
	if c.cache.remote == nil {
		return stats.Remote{}
	}
	return stats.Remote(c.cache.remote.Stats())
}

// allocStats returns the context's allocator statistics (Stats).
func (c *Context) allocStats() stats.Alloc {
	var s stats.Alloc
	if c == nil {
		return s
	}
	for i := range c.allocs.slots {
		if d := c.allocs.slots[i].Load(); d != nil {
			s.Devices = append(s.Devices, stats.DeviceAlloc{Device: d.dev.Name, Index: d.dev.index, Stats: d.a.Stats()})
		}
	}
	s.Devices = c.addImageStats(s.Devices) // images of allocation sites, below
	s.DriverAllocs = c.counters.driverAllocs.Load()
	s.DriverReleases = c.counters.driverReleases.Load()
	s.Budgets = c.budgetStats() // budget.go
	return s
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
