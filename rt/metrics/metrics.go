// Package metrics exports the statistics of an rt context as Prometheus
// metrics, as client_golang's collectors.NewDBStatsCollector exports those
// of a *sql.DB:
//
//	ctx, err := rt.Open()
//	...
//	prometheus.MustRegister(metrics.NewCollector(ctx, "search"))
//	http.Handle("/metrics", promhttp.Handler())
//
// The collector reads what rt counts anyway ([rt.Context.Stats], the
// tracer's count of dropped events, [rt.Context.Err]) when it is scraped:
// it adds nothing to a launch, a transfer or an allocation, and costs
// nothing between scrapes. A scrape takes the locks that Stats takes
// (each allocator's, the program cache's, the queue pool's), each for as
// long as it takes to copy its counters. The package is opt-in: an
// application that does not import it links no metrics library.
//
// # Metrics
//
// Every metric carries the constant label context, the name given to
// NewCollector (as db_name does for a *sql.DB), so that the collectors of
// several contexts register together. Names follow Prometheus's
// conventions: units in the name, counters end in _total, labels have few
// values each: device is the device's index in the context and
// device_name its name; site is the name of an allocation site (a
// //dgen:alloc variable, or "untagged"), of which a program has as many as
// it declares (sites of one name in different packages are one series:
// their counts summed, their peaks the larger); tier is one of memory,
// disk, remote and build. A specialization-constant value, a kernel
// argument or anything else that varies per launch is never a label.
//
// Program cache ([stats.Cache]):
//
//	dgen_program_lookups_total{tier}             lookups by the tier that served them: MemHits, DiskHits, Remote.Hits, Builds
//	dgen_program_build_seconds_total             the time the builds took (BuildTime)
//	dgen_program_build_errors_total              builds that failed (BuildErrors)
//	dgen_program_cache_retries_total             waiters that retried (Retries)
//	dgen_program_cache_evictions_total           programs evicted from memory (Evictions)
//	dgen_program_cache_oom_flushes_total         flushes on out of memory (OOMFlushes)
//	dgen_program_cache_programs                  programs in memory (Programs)
//	dgen_program_cache_bytes                     their binary sizes (Bytes)
//	dgen_kernel_cache_misses_total               fast kernel cache misses (KernelMisses)
//	dgen_tune_candidates_total                   candidates that SpecConst.Tune timed (Tuned)
//	dgen_tune_record_hits_total                  tunings a tuning record answered (TuneRecords)
//
// The remote tier beneath the persistent cache ([stats.Remote]; its hits
// are the lookups of tier remote):
//
//	dgen_remote_cache_misses_total               fetches that found nothing usable (Misses)
//	dgen_remote_cache_publishes_total            entries stored (Publishes)
//	dgen_remote_cache_errors_total               failed requests (Errors)
//	dgen_remote_cache_rejected_total             entries that failed their checks (Rejected)
//	dgen_remote_cache_dropped_publishes_total    publishes given up (Dropped)
//	dgen_remote_cache_lease_waits_total          waits for another process's build (Waits)
//
// Allocators, per device and site ([stats.Alloc], [alloc.TagStats]; the
// sum over sites is the device's total):
//
//	dgen_alloc_in_use_bytes{device,device_name,site}          bytes in live allocations (InUse)
//	dgen_alloc_held_bytes{device,device_name,site}            bytes in free blocks held for reuse (Held)
//	dgen_alloc_held_blocks{device,device_name,site}           free blocks held (HeldBlocks)
//	dgen_alloc_peak_bytes{device,device_name,site}            the highest held plus in use (Peak)
//	dgen_alloc_peak_in_use_bytes{device,device_name,site}     the highest in use (PeakInUse)
//	dgen_alloc_requests_total{device,device_name,site}        allocations asked for (Requests)
//	dgen_alloc_reuses_total{device,device_name,site}          served from a free list (Reuses)
//	dgen_alloc_driver_allocs_total{device,device_name,site}   served by a new driver block (DriverAllocs)
//	dgen_alloc_driver_releases_total{device,device_name,site} blocks handed back to the driver (DriverReleases)
//	dgen_alloc_failures_total{device,device_name,site}        allocations that failed (Failures)
//	dgen_alloc_ordered_reuses_total{device,device_name,site}  reuses that waited on another queue (Ordered)
//	dgen_alloc_oom_retries_total{device,device_name}          driver allocations retried after releasing held blocks (OOMRetries)
//	dgen_driver_buffer_allocs_total                           driver buffers created (Alloc.DriverAllocs)
//	dgen_driver_buffer_releases_total                         driver buffers released (Alloc.DriverReleases)
//
// The device-memory budget of each device ([stats.Budget], rt.Config.MemoryLimit):
//
//	dgen_memory_limit_bytes{device,device_name}               the limit; 0 for none (Limit)
//	dgen_memory_used_bytes{device,device_name}                bytes the context holds on the device (Used)
//	dgen_memory_peak_bytes{device,device_name}                the most it held at once (Peak)
//	dgen_memory_limit_waits_total{device,device_name}         allocations that waited for a free (Waits)
//	dgen_memory_limit_wait_seconds_total{device,device_name}  the time they waited (WaitTime)
//	dgen_memory_limit_refusals_total{device,device_name}      allocations the limit refused (Failures)
//
// Queues and events ([stats.Queues], [stats.Context].Events):
//
//	dgen_queues                       queues of the context (Queues)
//	dgen_queue_pool_queues            queues the pool has made (PoolQueues)
//	dgen_queue_pool_max_queues        the most it makes (PoolMax)
//	dgen_queue_pool_acquired          pool queues held by goroutines now, one per acquisition (Acquired)
//	dgen_queue_pool_shared_queues     pool queues that several goroutines hold (Shared)
//	dgen_live_events                  events handed out and not released (Events)
//
// Tracing and faults:
//
//	dgen_trace_dropped_events_total   events the trace files could not store (trace.Tracer.Dropped)
//	dgen_device_faults_total          1 once the context recorded a device fault (Err wraps rt.ErrDeviceFault), else 0
//
// Launch and transfer counts per kernel are not counted by rt, and the
// collector does not count them: a counter per kernel that every goroutine
// launching the kernel adds to would be one cache line written by all of
// them, on a path that today writes none that other goroutines share.
// The device profile of rt/devprof counts them, per Go caller, over the
// window it records.
package metrics

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/stats"
)

// snapshot is what one scrape reads of a context.
type snapshot struct {
	stats.Context
	dropped uint64 // the tracer's dropped events
	faults  int    // 1 after a device fault
}

// scalar is a metric with no label but the context's: one value of a
// snapshot.
type scalar struct {
	name, help string
	typ        prometheus.ValueType
	value      func(s *snapshot) float64
}

// tagged is a metric of one allocation site on one device.
type tagged struct {
	name, help string
	typ        prometheus.ValueType
	value      func(t *alloc.TagStats) float64
}

// The types of metrics, short.
const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// scalars are the metrics of a context as a whole.
var scalars = []scalar{
	{"program_build_seconds_total", "The time that the program cache's builds from source took, failed builds included.", counter,
		func(s *snapshot) float64 { return s.Cache.BuildTime.Seconds() }},
	{"program_build_errors_total", "Program builds that failed with rt.ErrBuildFailed.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.BuildErrors) }},
	{"program_cache_retries_total", "Program lookups that waited for another goroutine's build and retried after a failure that was not a build error.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Retries) }},
	{"program_cache_evictions_total", "Programs evicted from the in-memory program cache.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Evictions) }},
	{"program_cache_oom_flushes_total", "Flushes of the whole in-memory program cache on out-of-memory errors.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.OOMFlushes) }},
	{"program_cache_programs", "Programs in the in-memory program cache.", gauge,
		func(s *snapshot) float64 { return float64(s.Cache.Programs) }},
	{"program_cache_bytes", "The binary sizes of the programs in the in-memory program cache.", gauge,
		func(s *snapshot) float64 { return float64(s.Cache.Bytes) }},
	{"kernel_cache_misses_total", "Misses of the fast kernel cache.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.KernelMisses) }},
	{"tune_candidates_total", "Candidate values that SpecConst.Tune timed.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Tuned) }},
	{"tune_record_hits_total", "Tunings that a tuning record answered without timing.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.TuneRecords) }},
	{"remote_cache_misses_total", "Fetches from the remote program cache tier that found nothing usable.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Remote.Misses) }},
	{"remote_cache_publishes_total", "Program binaries stored on the remote program cache tier.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Remote.Publishes) }},
	{"remote_cache_errors_total", "Requests to the remote program cache tier that failed.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Remote.Errors) }},
	{"remote_cache_rejected_total", "Entries of the remote program cache tier that failed their checks.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Remote.Rejected) }},
	{"remote_cache_dropped_publishes_total", "Publishes to the remote program cache tier given up for want of a free slot.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Remote.Dropped) }},
	{"remote_cache_lease_waits_total", "Lookups that waited for another process's build of the same program.", counter,
		func(s *snapshot) float64 { return float64(s.Cache.Remote.Waits) }},
	{"driver_buffer_allocs_total", "Driver buffers created through the context, by the allocators and rt.NewBuffer.", counter,
		func(s *snapshot) float64 { return float64(s.Alloc.DriverAllocs) }},
	{"driver_buffer_releases_total", "Driver buffers released through the context.", counter,
		func(s *snapshot) float64 { return float64(s.Alloc.DriverReleases) }},
	{"queues", "Queues of the context: its default queue, those of NewQueue and those of the queue pool.", gauge,
		func(s *snapshot) float64 { return float64(s.Queues.Queues) }},
	{"queue_pool_queues", "Queues that the queue pool has made.", gauge,
		func(s *snapshot) float64 { return float64(s.Queues.PoolQueues) }},
	{"queue_pool_max_queues", "The most queues the queue pool makes at each queue priority (Config.QueuePool).", gauge,
		func(s *snapshot) float64 { return float64(s.Queues.PoolMax) }},
	{"queue_pool_acquired", "Acquisitions of pool queues not yet released.", gauge,
		func(s *snapshot) float64 { return float64(s.Queues.Acquired) }},
	{"queue_pool_shared_queues", "Pool queues that more than one goroutine holds.", gauge,
		func(s *snapshot) float64 { return float64(s.Queues.Shared) }},
	{"live_events", "Events that the context handed out and that are not released yet.", gauge,
		func(s *snapshot) float64 { return float64(s.Events) }},
	{"trace_dropped_events_total", "Trace events that the context's trace files could not store.", counter,
		func(s *snapshot) float64 { return float64(s.dropped) }},
	{"device_faults_total", "Device faults that the context recorded: 1 once it has faulted, else 0.", counter,
		func(s *snapshot) float64 { return float64(s.faults) }},
}

// taggeds are the metrics of each allocation site on each device.
var taggeds = []tagged{
	{"alloc_in_use_bytes", "Bytes of device memory in live allocations.", gauge,
		func(t *alloc.TagStats) float64 { return float64(t.InUse) }},
	{"alloc_held_bytes", "Bytes of device memory in free blocks that the allocator holds for reuse.", gauge,
		func(t *alloc.TagStats) float64 { return float64(t.Held) }},
	{"alloc_held_blocks", "Free blocks that the allocator holds for reuse.", gauge,
		func(t *alloc.TagStats) float64 { return float64(t.HeldBlocks) }},
	{"alloc_peak_bytes", "The highest bytes of device memory held and in use together so far.", gauge,
		func(t *alloc.TagStats) float64 { return float64(t.Peak) }},
	{"alloc_peak_in_use_bytes", "The highest bytes of device memory in use so far.", gauge,
		func(t *alloc.TagStats) float64 { return float64(t.PeakInUse) }},
	{"alloc_requests_total", "Allocations asked of the allocator.", counter,
		func(t *alloc.TagStats) float64 { return float64(t.Requests) }},
	{"alloc_reuses_total", "Allocations served from a free list.", counter,
		func(t *alloc.TagStats) float64 { return float64(t.Reuses) }},
	{"alloc_driver_allocs_total", "Allocations served by a new driver block.", counter,
		func(t *alloc.TagStats) float64 { return float64(t.DriverAllocs) }},
	{"alloc_driver_releases_total", "Blocks that the allocator handed back to the driver.", counter,
		func(t *alloc.TagStats) float64 { return float64(t.DriverReleases) }},
	{"alloc_failures_total", "Allocations that failed.", counter,
		func(t *alloc.TagStats) float64 { return float64(t.Failures) }},
	{"alloc_ordered_reuses_total", "Reuses of a block last used on another queue that made the new queue wait for it on the device.", counter,
		func(t *alloc.TagStats) float64 { return float64(t.Ordered) }},
}

// budgets are the metrics of each device's memory budget.
var budgets = []struct {
	name, help string
	typ        prometheus.ValueType
	value      func(b *stats.Budget) float64
}{
	{"memory_limit_bytes", "The bound on the device memory the context holds on the device (rt.Config.MemoryLimit); 0 for none.", gauge,
		func(b *stats.Budget) float64 { return float64(b.Limit) }},
	{"memory_used_bytes", "Bytes of device memory the context holds on the device, as the budget counts them.", gauge,
		func(b *stats.Budget) float64 { return float64(b.Used) }},
	{"memory_peak_bytes", "The most bytes of device memory the context held on the device at once.", gauge,
		func(b *stats.Budget) float64 { return float64(b.Peak) }},
	{"memory_limit_waits_total", "Allocations that waited for a free at the memory limit.", counter,
		func(b *stats.Budget) float64 { return float64(b.Waits) }},
	{"memory_limit_wait_seconds_total", "The time allocations waited for frees at the memory limit.", counter,
		func(b *stats.Budget) float64 { return b.WaitTime.Seconds() }},
	{"memory_limit_refusals_total", "Allocations that the memory limit refused, at once or when their wait ended.", counter,
		func(b *stats.Budget) float64 { return float64(b.Failures) }},
}

// The program cache's tiers, the values of the label tier.
var tiers = []struct {
	name  string
	value func(c *stats.Cache) int64
}{
	{"memory", func(c *stats.Cache) int64 { return c.MemHits }},
	{"disk", func(c *stats.Cache) int64 { return c.DiskHits }},
	{"remote", func(c *stats.Cache) int64 { return c.Remote.Hits }},
	{"build", func(c *stats.Cache) int64 { return c.Builds }},
}

// namespace prefixes every metric's name.
const namespace = "dgen"

// collector is the prometheus.Collector of one context. Its fields are
// set by NewCollector and never changed after, so that it is safe for
// concurrent scrapes.
type collector struct {
	ctx        *rt.Context
	lookups    *prometheus.Desc
	oomRetries *prometheus.Desc
	scalars    []*prometheus.Desc // by index in scalars
	taggeds    []*prometheus.Desc // by index in taggeds
	budgets    []*prometheus.Desc // by index in budgets
}

// NewCollector returns a collector that exports the statistics of ctx
// (see the package documentation for the metrics), with the constant
// label context set to name. Register it once per context; a collector of
// a closed context goes on reporting the counts of its last statistics
// (rt.Context.Stats works after Close), and should be unregistered when
// the context is no longer of interest. A nil ctx is a mistake that
// NewCollector reports at once: it panics with an error wrapping
// rt.ErrInvalidArgument, as prometheus.MustRegister panics.
func NewCollector(ctx *rt.Context, name string) prometheus.Collector {
	if ctx == nil {
		panic(fmt.Errorf("metrics: NewCollector: %w: nil context", rt.ErrInvalidArgument))
	}
	labels := prometheus.Labels{"context": name}
	desc := func(n, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_"+n, help, vars, labels)
	}
	c := &collector{
		ctx: ctx,
		lookups: desc("program_lookups_total",
			"Program lookups by the tier of the program cache that served them: memory, the local persistent cache (disk), the remote tier, or a build from source.", "tier"),
		oomRetries: desc("alloc_oom_retries_total",
			"Driver allocations retried after the allocator released its held blocks.", "device", "device_name"),
	}
	for _, m := range scalars {
		c.scalars = append(c.scalars, desc(m.name, m.help))
	}
	for _, m := range taggeds {
		c.taggeds = append(c.taggeds, desc(m.name, m.help, "device", "device_name", "site"))
	}
	for _, m := range budgets {
		c.budgets = append(c.budgets, desc(m.name, m.help, "device", "device_name"))
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lookups
	ch <- c.oomRetries
	for _, d := range c.scalars {
		ch <- d
	}
	for _, d := range c.taggeds {
		ch <- d
	}
	for _, d := range c.budgets {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := snapshot{Context: c.ctx.Stats(), dropped: c.ctx.Tracer().Dropped()}
	if errors.Is(c.ctx.Err(), rt.ErrDeviceFault) {
		s.faults = 1
	}
	for _, t := range tiers {
		ch <- prometheus.MustNewConstMetric(c.lookups, counter, float64(t.value(&s.Cache)), t.name)
	}
	for i, m := range scalars {
		ch <- prometheus.MustNewConstMetric(c.scalars[i], m.typ, m.value(&s))
	}
	for _, d := range s.Alloc.Devices {
		dev := strconv.Itoa(d.Index)
		ch <- prometheus.MustNewConstMetric(c.oomRetries, counter, float64(d.OOMRetries), dev, d.Device)
		for _, t := range bySite(d.Tags) {
			for i, m := range taggeds {
				ch <- prometheus.MustNewConstMetric(c.taggeds[i], m.typ, m.value(&t), dev, d.Device, t.Name)
			}
		}
	}
	for j := range s.Alloc.Budgets {
		b := &s.Alloc.Budgets[j]
		for i, m := range budgets {
			ch <- prometheus.MustNewConstMetric(c.budgets[i], m.typ, m.value(b), strconv.Itoa(b.Index), b.Device)
		}
	}
}

// bySite returns tags with those of one name merged (TagStats.Add), in the
// order of their first: sites of two packages may share a name, and two
// series of one label set would fail the whole scrape.
func bySite(tags []alloc.TagStats) []alloc.TagStats {
	out := make([]alloc.TagStats, 0, len(tags))
	at := make(map[string]int, len(tags))
	for _, t := range tags {
		if i, ok := at[t.Name]; ok {
			out[i].Add(t)
			continue
		}
		at[t.Name] = len(out)
		out = append(out, t)
	}
	return out
}
