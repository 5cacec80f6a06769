package metrics_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends"
	"github.com/dgen-go/dgen/rt/metrics"
	"github.com/dgen-go/dgen/rt/raw"
)

const saxpy = `__kernel void saxpy(float a, __global const float *x, __global float *y, int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}`

// busyContext opens a context on PoCL and uses it so that every metric has
// something to count: a build, launches, allocations in use and held,
// driver buffers, pool queues held once and shared, a live event.
func busyContext(t *testing.T) *rt.Context {
	t.Helper()
	ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(testenv.Backend()), Device: testenv.Device(), QueuePool: 1, MemoryLimit: 64 << 20})
	testenv.SkipWithoutDevice(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	q := ctx.Queue()
	prog, err := raw.Build(ctx, "saxpy", saxpy, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1024
	x, err := rt.Alloc[float32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	y, err := rt.NewBuffer[float32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(raw.SetArg(k, 0, float32(2)), raw.SetBuffer(k, 1, x), raw.SetBuffer(k, 2, y), raw.SetArg(k, 3, int32(n))); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := raw.Submit(q, k, rt.Range1(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Launch(q, k, rt.Range1(n)); err != nil { // an event left live
		t.Fatal(err)
	}
	held, err := rt.Alloc[float32](q, 4*n)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Free(); err != nil { // into the free list
		t.Fatal(err)
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // one pool queue, held twice: acquired 2, shared 1
		if _, err := ctx.AcquireQueue(); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// sample is one value that a scrape must show.
type sample struct {
	family string
	labels map[string]string // besides context
	want   float64
}

func TestCollectorMatchesStats(t *testing.T) {
	ctx := busyContext(t)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewCollector(ctx, "test"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	st := ctx.Stats()
	if len(st.Alloc.Devices) == 0 {
		t.Fatal("Stats has no allocator: the test allocated nothing")
	}
	d := st.Alloc.Devices[0]
	dev := map[string]string{"device": fmt.Sprint(d.Index), "device_name": d.Device}
	tag := d.Stats.Tag(0) // the untagged pool, where rt.Alloc allocates
	site := map[string]string{"device": fmt.Sprint(d.Index), "device_name": d.Device, "site": tag.Name}
	tests := []sample{
		{"dgen_program_lookups_total", map[string]string{"tier": "memory"}, float64(st.Cache.MemHits)},
		{"dgen_program_lookups_total", map[string]string{"tier": "disk"}, float64(st.Cache.DiskHits)},
		{"dgen_program_lookups_total", map[string]string{"tier": "remote"}, float64(st.Cache.Remote.Hits)},
		{"dgen_program_lookups_total", map[string]string{"tier": "build"}, float64(st.Cache.Builds)},
		{"dgen_program_build_seconds_total", nil, st.Cache.BuildTime.Seconds()},
		{"dgen_program_build_errors_total", nil, float64(st.Cache.BuildErrors)},
		{"dgen_program_cache_retries_total", nil, float64(st.Cache.Retries)},
		{"dgen_program_cache_evictions_total", nil, float64(st.Cache.Evictions)},
		{"dgen_program_cache_oom_flushes_total", nil, float64(st.Cache.OOMFlushes)},
		{"dgen_program_cache_programs", nil, float64(st.Cache.Programs)},
		{"dgen_program_cache_bytes", nil, float64(st.Cache.Bytes)},
		{"dgen_kernel_cache_misses_total", nil, float64(st.Cache.KernelMisses)},
		{"dgen_tune_candidates_total", nil, float64(st.Cache.Tuned)},
		{"dgen_tune_record_hits_total", nil, float64(st.Cache.TuneRecords)},
		{"dgen_remote_cache_misses_total", nil, float64(st.Cache.Remote.Misses)},
		{"dgen_remote_cache_publishes_total", nil, float64(st.Cache.Remote.Publishes)},
		{"dgen_remote_cache_errors_total", nil, float64(st.Cache.Remote.Errors)},
		{"dgen_remote_cache_rejected_total", nil, float64(st.Cache.Remote.Rejected)},
		{"dgen_remote_cache_dropped_publishes_total", nil, float64(st.Cache.Remote.Dropped)},
		{"dgen_remote_cache_lease_waits_total", nil, float64(st.Cache.Remote.Waits)},
		{"dgen_alloc_in_use_bytes", site, float64(tag.InUse)},
		{"dgen_alloc_held_bytes", site, float64(tag.Held)},
		{"dgen_alloc_held_blocks", site, float64(tag.HeldBlocks)},
		{"dgen_alloc_peak_bytes", site, float64(tag.Peak)},
		{"dgen_alloc_peak_in_use_bytes", site, float64(tag.PeakInUse)},
		{"dgen_alloc_requests_total", site, float64(tag.Requests)},
		{"dgen_alloc_reuses_total", site, float64(tag.Reuses)},
		{"dgen_alloc_driver_allocs_total", site, float64(tag.DriverAllocs)},
		{"dgen_alloc_driver_releases_total", site, float64(tag.DriverReleases)},
		{"dgen_alloc_failures_total", site, float64(tag.Failures)},
		{"dgen_alloc_ordered_reuses_total", site, float64(tag.Ordered)},
		{"dgen_alloc_oom_retries_total", dev, float64(d.OOMRetries)},
		{"dgen_driver_buffer_allocs_total", nil, float64(st.Alloc.DriverAllocs)},
		{"dgen_driver_buffer_releases_total", nil, float64(st.Alloc.DriverReleases)},
		{"dgen_queues", nil, float64(st.Queues.Queues)},
		{"dgen_queue_pool_queues", nil, float64(st.Queues.PoolQueues)},
		{"dgen_queue_pool_max_queues", nil, float64(st.Queues.PoolMax)},
		{"dgen_queue_pool_acquired", nil, float64(st.Queues.Acquired)},
		{"dgen_queue_pool_shared_queues", nil, float64(st.Queues.Shared)},
		{"dgen_live_events", nil, float64(st.Events)},
		{"dgen_trace_dropped_events_total", nil, float64(ctx.Tracer().Dropped())},
		{"dgen_device_faults_total", nil, 0},
	}
	if len(st.Alloc.Budgets) == 0 {
		t.Fatal("Stats has no memory budget")
	}
	b := st.Alloc.Budgets[0]
	bdev := map[string]string{"device": fmt.Sprint(b.Index), "device_name": b.Device}
	tests = append(tests, []sample{
		{"dgen_memory_limit_bytes", bdev, float64(b.Limit)},
		{"dgen_memory_used_bytes", bdev, float64(b.Used)},
		{"dgen_memory_peak_bytes", bdev, float64(b.Peak)},
		{"dgen_memory_limit_waits_total", bdev, float64(b.Waits)},
		{"dgen_memory_limit_wait_seconds_total", bdev, b.WaitTime.Seconds()},
		{"dgen_memory_limit_refusals_total", bdev, float64(b.Failures)},
	}...)
	for _, tt := range tests {
		got, ok := find(mfs, tt.family, tt.labels)
		if !ok {
			t.Errorf("%s%v: not in the scrape", tt.family, tt.labels)
			continue
		}
		if got != tt.want {
			t.Errorf("%s%v = %v, want %v (Stats)", tt.family, tt.labels, got, tt.want)
		}
	}
	// Every family the collector exports is checked above, and every one
	// checked is exported.
	var checked, gathered []string
	for _, tt := range tests {
		checked = append(checked, tt.family)
	}
	for _, mf := range mfs {
		gathered = append(gathered, mf.GetName())
	}
	sort.Strings(checked)
	checked = slices.Compact(checked)
	if !slices.Equal(checked, gathered) {
		t.Errorf("families gathered:\n%s\nfamilies checked:\n%s", strings.Join(gathered, "\n"), strings.Join(checked, "\n"))
	}
	// What the context did shows, so that the comparisons above compare
	// something.
	for _, c := range []struct {
		what string
		n    float64
	}{
		{"builds", float64(st.Cache.Builds)}, {"build time", st.Cache.BuildTime.Seconds()},
		{"bytes in use", float64(tag.InUse)}, {"bytes held", float64(tag.Held)},
		{"driver buffers", float64(st.Alloc.DriverAllocs)}, {"shared pool queues", float64(st.Queues.Shared)},
		{"live events", float64(st.Events)},
	} {
		if c.n == 0 {
			t.Errorf("%s: 0 after the context's work", c.what)
		}
	}
}

// find returns the value of the sample of family with the labels given
// and context="test".
func find(mfs []*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["context"] != "test" || len(got) != len(labels)+1 {
				continue
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			}
		}
	}
	return 0, false
}

func TestCollectorLint(t *testing.T) {
	ctx := busyContext(t)
	problems, err := testutil.CollectAndLint(metrics.NewCollector(ctx, "test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// TestCollectorsOfTwoContexts registers the collectors of two contexts
// together: the context label tells them apart.
func TestCollectorsOfTwoContexts(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	for _, name := range []string{"a", "b"} {
		reg.MustRegister(metrics.NewCollector(busyContext(t), name))
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

func TestNewCollectorNilContext(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("NewCollector(nil) panicked with %v, want an error wrapping rt.ErrInvalidArgument", err)
		}
	}()
	metrics.NewCollector(nil, "nil")
}

// BenchmarkCollect measures a scrape of a context's collector: one
// Context.Stats and the metrics made from it.
func BenchmarkCollect(b *testing.B) {
	ctx, err := rt.Open()
	testenv.SkipWithoutDevice(b, err)
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	buf, err := rt.Alloc[float32](ctx.Queue(), 1024)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(ctx, "bench"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
