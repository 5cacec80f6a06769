package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
)

// openFakeDevices opens a context on n devices of the fake backend, with
// the persistent cache in a temporary directory.
func openFakeDevices(t *testing.T, n int) *rt.Context {
	t.Helper()
	ps, err := rt.Devices("fake")
	if err != nil {
		t.Fatal(err)
	}
	var devs []driver.DeviceInfo
	for range n {
		devs = append(devs, ps[0].Devices[0])
	}
	cc := rt.DefaultCacheConfig()
	cc.Disk = diskcache.DefaultConfig(t.TempDir())
	ctx, err := rt.OpenConfig(rt.Config{Backend: "fake", Devices: devs, Cache: &cc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// TestTooFewBinaries: a driver that returns fewer binaries than the
// context has devices is an error of storing the program, not an index
// out of range: the program is built and works, and nothing is stored.
func TestTooFewBinaries(t *testing.T) {
	for _, ndev := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d devices", ndev), func(t *testing.T) {
			ctx := openFakeDevices(t, ndev)
			src := fmt.Sprintf("// fake:binaries=0 %d\n__kernel void k(int n) {}\n", ndev)
			p, err := ctx.BuildProgram("few", src, "")
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			defer p.Release()
			if _, err := p.Kernel("k"); err != nil {
				t.Errorf("kernel of a program whose binaries could not be stored: %v", err)
			}
			if es, err := ctx.PersistentCache().List(); err != nil || len(es) != 0 {
				t.Errorf("%d entries stored (%v); want none", len(es), err)
			}
		})
	}
}

// TestWaiterOnFailedBuildIsNoHit: a request that waits for another
// goroutine's build of the same program is a memory hit only once that
// build has succeeded; a build that fails gives its waiters no hit.
func TestWaiterOnFailedBuildIsNoHit(t *testing.T) {
	ctx := openFake(t, nil)
	src := "// fake:sleep=200ms\n#error no\n"
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ctx.BuildProgram("fails", src, "")
		}()
		time.Sleep(50 * time.Millisecond) // the second one waits for the first
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, rt.ErrBuildFailed) {
			t.Errorf("request %d: %v; want ErrBuildFailed", i, err)
		}
	}
	if s := ctx.CacheStats(); s.MemHits != 0 || s.Builds != 1 {
		t.Errorf("stats %+v; want 1 build and no memory hit", s)
	}
}
