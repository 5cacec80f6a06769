package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// TestEvictionUnderLaunches: goroutines on queues of their own launch
// ls_put with per-launch values of LSCALE taken from "request data" (16
// values, so 16 program variants), under an eviction threshold of about
// three and a half programs, so that nearly every miss evicts a variant
// that another goroutine has just built or is making a kernel of. Every
// launch must succeed and compute with its own value: an eviction by
// another goroutine is the cache's business, never the launch's error
// (issue 52: launches failed with "get kernel: closed: evicted from the
// cache"). Memory stays bounded (the cache evicts, and holds no more than
// the threshold plus the programs that launches hold at that moment), and a
// value out of range is still refused.
func TestEvictionUnderLaunches(t *testing.T) {
	const (
		workers  = 16
		values   = 16
		launches = 60 // per worker
	)
	// The size of one variant's program, to set the threshold by.
	dir := t.TempDir()
	probe := cacheWith(t, 1<<40, dir) // a threshold, so that sizes count
	if _, _, err := lsRun(probe.Queue(), lsBuffer(t, probe), lsScale.Of(2)); err != nil {
		t.Fatal(err)
	}
	size := probe.Stats().Cache.Bytes
	if size <= 0 {
		t.Fatalf("a program of %d bytes in the cache's stats: want its size", size)
	}
	threshold := size * 7 / 2

	ctx := cacheWith(t, threshold, dir)
	var (
		wg      sync.WaitGroup
		failed  atomic.Int64
		maxHeld atomic.Int64
		stop    = make(chan struct{})
		errMu   sync.Mutex
		errs    []string
	)
	// Sample what the cache holds while the workers run.
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if b := ctx.Stats().Cache.Bytes; b > maxHeld.Load() {
				maxHeld.Store(b)
			}
		}
	}()
	for w := range workers {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		out := lsBuffer(t, ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range launches {
				v := int32((w*7+i*5)%values + 1)
				scale, bias, err := lsRun(q, out, lsScale.Of(v))
				if err == nil && (scale != v || bias != 0) {
					err = fmt.Errorf("the kernel ran with LSCALE=%d LBIAS=%d; want %d and 0", scale, bias, v)
				}
				if err != nil {
					failed.Add(1)
					errMu.Lock()
					if len(errs) < 5 {
						errs = append(errs, fmt.Sprintf("worker %d, launch %d (LSCALE=%d): %v", w, i, v, err))
					}
					errMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d launches failed; the first:", n, workers*launches)
		for _, e := range errs {
			t.Errorf("  %s", e)
		}
	}
	s := ctx.Stats().Cache
	t.Logf("cache stats %+v, threshold %d, program %d bytes, held at most %d", s, threshold, size, maxHeld.Load())
	if s.Evictions == 0 {
		t.Errorf("cache stats %+v: want evictions under a threshold of %d bytes (programs of %d)", s, threshold, size)
	}
	// At rest the cache is under the threshold but for the program used
	// last; while the workers ran, each could hold one program more (the
	// variants' sizes differ by a few bytes: one program's more is the
	// margin).
	if s.Bytes > threshold+size {
		t.Errorf("the cache holds %d bytes at rest; want at most the threshold %d and one program of %d", s.Bytes, threshold, size)
	}
	if m := maxHeld.Load(); m > threshold+(workers+2)*size {
		t.Errorf("the cache held %d bytes while the workers ran; want at most the threshold %d and a program of %d for each of %d workers, the one built last and a margin", m, threshold, size, workers)
	}
	if _, _, err := lsRun(ctx.Queue(), lsBuffer(t, ctx), lsScale.Of(101)); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("LSCALE=101, above its max: %v; want an error wrapping ErrOutOfRange", err)
	}
}

// cacheWith opens a CPU context whose in-memory cache evicts above
// threshold bytes, over a persistent cache in dir, which makes a rebuild
// after an eviction a load.
func cacheWith(t *testing.T, threshold int64, dir string) *rt.Context {
	cc := defaultCacheConfig()
	cc.EvictionThreshold = threshold
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(dir))
	return openCPUConfig(t, rt.Config{Cache: &cc})
}
