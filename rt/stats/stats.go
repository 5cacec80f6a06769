// Package stats holds the statistics that an rt context reports
// (Context.Stats returns a Context): what its program cache did (Cache),
// what its allocators hold and did (Alloc), and what its queues and
// events are (Queues, Events). They are plain values, safe to keep,
// compare and print; rt/metrics exports them to Prometheus.
package stats

import (
	"fmt"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt/alloc"
)

// Remote is what the shared remote tier beneath the persistent cache did
// (CacheConfig.Remote).
type Remote struct {
	Hits      int64 `json:"hits"`      // binaries fetched and accepted
	Misses    int64 `json:"misses"`    // fetches that found nothing usable
	Publishes int64 `json:"publishes"` // entries stored on the remote
	Errors    int64 `json:"errors"`    // failed requests (down, refusing, slow, full)
	Rejected  int64 `json:"rejected"`  // entries that failed their checks
	Dropped   int64 `json:"dropped"`   // publishes given up for want of a free slot
	Waits     int64 `json:"waits"`     // claims that waited for another process's build
}

// Context is what an rt context reports: the counters of its program
// cache, and snapshots of its allocators, its queues and its events.
type Context struct {
	Cache  Cache
	Alloc  Alloc
	Queues Queues
	// Events is the number of events (rt.Event) that the context handed
	// out and that are not released yet.
	Events int
}

// Queues is a snapshot of a context's queues and of its queue pool
// (rt.Context.AcquireQueue).
type Queues struct {
	Queues     int `json:"queues"`      // queues of the context, its default queue and the pool's included
	PoolQueues int `json:"pool_queues"` // queues the pool has made
	PoolMax    int `json:"pool_max"`    // the most queues the pool makes (Config.QueuePool)
	// Acquired counts the acquisitions of pool queues not yet released:
	// the goroutines that hold one now.
	Acquired int `json:"acquired"`
	// Shared counts the pool queues that more than one goroutine holds
	// now: the pool ran out of queues of its own to hand out.
	Shared int `json:"shared"`
}

// Cache counts what a context's program cache did. Every program lookup
// counts exactly once, at the tier that served it: memory (MemHits), the
// local persistent cache (DiskHits), the remote tier (Remote.Hits) or a
// build (Builds); Remote.Misses counts the lookups that asked the remote
// tier in vain, once each. A launch through the fast kernel cache with
// unchanged specialization-constant values is no lookup.
type Cache struct {
	Builds int64 `json:"builds"` // programs compiled from source
	// BuildTime is the time the Builds took, failed builds included.
	BuildTime time.Duration `json:"build_time"`
	DiskHits  int64         `json:"disk_hits"` // programs loaded from the local persistent cache; not those the remote tier gave
	// MemHits counts programs found in memory (built, or built by another
	// goroutine while this one waited: it counts once the build
	// succeeded), and first uses of a kernel after the
	// specialization-constant values changed whose program was in memory.
	MemHits      int64 `json:"mem_hits"`
	BuildErrors  int64 `json:"build_errors"`  // builds that failed with ErrBuildFailed
	Retries      int64 `json:"retries"`       // waiters that retried after a failure that was not a build error
	Evictions    int64 `json:"evictions"`     // programs evicted from memory
	OOMFlushes   int64 `json:"oom_flushes"`   // flushes of the whole cache on ErrOutOfMemory
	KernelMisses int64 `json:"kernel_misses"` // fast kernel cache misses
	Programs     int   `json:"programs"`      // programs in memory now
	Bytes        int64 `json:"bytes"`         // their binary sizes
	// Remote counts what the shared remote tier (DGEN_CACHE_REMOTE) did.
	Remote Remote `json:"remote"`
	// Tuned counts the candidates that rt.SpecConst.Tune timed, and
	// TuneRecords the tunings that a tuning record answered, timing
	// nothing.
	Tuned       int64 `json:"tuned"`
	TuneRecords int64 `json:"tune_records"`
}

// Alloc is a snapshot of a context's device memory statistics.
type Alloc struct {
	// Devices has the allocator statistics of every device of the context
	// whose allocator has been used, in device order. Tag names are the
	// allocation sites'.
	Devices []DeviceAlloc
	// DriverAllocs and DriverReleases count every driver buffer created and
	// released through the context: by the allocators and rt.NewBuffer.
	DriverAllocs, DriverReleases uint64
	// Budgets has the account of the memory the context holds on each of
	// its devices, within rt.Config.MemoryLimit, in device order.
	Budgets []Budget
}

// Budget is the account of the device memory that a context holds on one
// device (rt.Config.MemoryLimit, DGEN_MEMORY_LIMIT): the blocks of its
// allocators, held and in use, and the memory it has from the driver
// (rt.NewBuffer, rt.NewImage, device globals), which counts on the
// context's first device; and the allocations that the limit made wait
// or refused.
type Budget struct {
	// Device is the device's name; Index its position among the
	// context's devices.
	Device string
	Index  int
	Limit  int64 // the limit in bytes; 0 for none
	Used   int64 // the bytes held now
	Peak   int64 // the most bytes held at once
	// Waits counts the allocations that waited for a free (the Context
	// forms), and WaitTime the time they waited in all; Failures counts
	// the allocations that the limit refused: at once (the plain forms,
	// and any request above the limit) or when their wait ended.
	Waits    uint64
	WaitTime time.Duration
	Failures uint64
}

// DeviceAlloc are the statistics of one device's allocator.
type DeviceAlloc struct {
	// Device is the device's name; Index its position among the
	// context's devices.
	Device string
	Index  int
	alloc.Stats
}

// Total returns the statistics of every device together (Peak is the
// largest device peak).
func (s Alloc) Total() alloc.TagStats {
	t := alloc.TagStats{Name: "total"}
	for _, d := range s.Devices {
		t.Add(d.Stats.Total)
	}
	return t
}

// Tag returns the statistics of one tag over every device, named as the
// devices' allocators name it (the allocation site's name); a tag that no
// allocator has seen has no name.
func (s Alloc) Tag(tag uint32) alloc.TagStats {
	t := alloc.TagStats{Tag: alloc.Tag(tag)}
	for _, d := range s.Devices {
		ts := d.Stats.Tag(alloc.Tag(tag))
		if t.Name == "" {
			t.Name = ts.Name
		}
		t.Add(ts)
	}
	return t
}

// String formats the statistics as a table, one line per device and tag.
func (s Alloc) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %-20s %9s %9s %7s %8s %12s %12s %12s\n", "device", "tag", "requests", "reuses", "allocs", "releases", "held", "in use", "peak")
	for _, d := range s.Devices {
		for _, t := range append(d.Tags, d.Stats.Total) {
			fmt.Fprintf(&b, "%-24.24s %-20.20s %9d %9d %7d %8d %12d %12d %12d\n", d.Device, t.Name, t.Requests, t.Reuses, t.DriverAllocs, t.DriverReleases, t.Held, t.InUse, t.Peak)
		}
	}
	fmt.Fprintf(&b, "driver buffers created %d, released %d\n", s.DriverAllocs, s.DriverReleases)
	for _, m := range s.Budgets {
		if m.Limit > 0 {
			fmt.Fprintf(&b, "memory limit on %s: %d of %d bytes in use (peak %d), %d waits (%v), %d refused\n",
				m.Device, m.Used, m.Limit, m.Peak, m.Waits, m.WaitTime, m.Failures)
		}
	}
	return b.String()
}
