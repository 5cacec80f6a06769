package progcache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
)

// gatedBuilder is a testBuilder whose builds begin (started) and then
// wait for gate to close, so that goroutines meet a build in progress.
// Its Enter and Exit count the operations in progress, as rt's do for
// Close, and it counts the releases of the programs it built.
type gatedBuilder struct {
	*testBuilder
	started  chan struct{} // receives once per build
	gate     chan struct{}
	ops      sync.WaitGroup
	released atomic.Int32
	once     sync.Once
}

// open lets the builds go on.
func (b *gatedBuilder) open() { b.once.Do(func() { close(b.gate) }) }

// drain lets every build go on and waits for the operations in progress.
func (b *gatedBuilder) drain() {
	b.open()
	b.ops.Wait()
}

func newGatedBuilder(tb *testBuilder) *gatedBuilder {
	return &gatedBuilder{testBuilder: tb, started: make(chan struct{}, 8), gate: make(chan struct{})}
}

func (b *gatedBuilder) Enter(*Image) error { b.ops.Add(1); return nil }
func (b *gatedBuilder) Exit()              { b.ops.Done() }

func (b *gatedBuilder) Build(name, source, options string) (driver.Program, error) {
	b.started <- struct{}{}
	<-b.gate
	p, err := b.testBuilder.Build(name, source, options)
	if err != nil {
		return nil, err
	}
	return countedProgram{p, &b.released}, nil
}

// countedProgram counts its releases.
type countedProgram struct {
	driver.Program
	n *atomic.Int32
}

func (p countedProgram) Release() error {
	p.n.Add(1)
	return p.Program.Release()
}

// logWatch is a Log hook that calls on for every line holding what.
type logWatch struct {
	what string
	on   func()
}

func (w logWatch) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.what) {
		w.on()
	}
	return len(p), nil
}

// await receives from ch, and fails the test if nothing comes within 30
// seconds.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no sign of %s within 30 seconds", what)
	}
}

// newGated returns a cache whose builds wait for the gate, and whose
// waiters call onWait as they begin to wait.
func newGated(t *testing.T, disk bool, onWait func()) (*Cache[*testKernel], *gatedBuilder) {
	c, tb := newCache(t, Config{InMemory: true}, disk)
	gb := newGatedBuilder(tb)
	t.Cleanup(gb.drain) // before the cache's cleanup: no build outlives the test
	cfg := c.cfg
	cfg.Hooks.Log = logWatch{"wait for", onWait}
	c.Init(gb, cfg)
	return c, gb
}

// TestWaiterCancelled cancels a goroutine that waits for another's build:
// it returns the context's error, and the build goes on for the builder.
func TestWaiterCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, b := newGated(t, false, cancel) // the waiter is cancelled as it begins to wait
	img := uniqueImage("test.Cancel", "3")
	built := make(chan error, 1)
	go func() {
		p, _, err := c.Program(img)
		if err == nil {
			err = p.Release()
		}
		built <- err
	}()
	<-b.started
	within(t, "a cancelled waiter", func() {
		if _, _, err := c.ProgramContext(ctx, img); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled waiter: %v, want context.Canceled", err)
		}
	})
	b.open()
	if err := <-built; err != nil {
		t.Fatalf("the builder: %v", err)
	}
	p, _, err := c.ProgramContext(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
	if s := c.Stats(); s.Builds != 1 || s.MemHits != 1 {
		t.Errorf("stats %+v, want 1 build and 1 memory hit", s)
	}
}

// TestBuilderCancelled cancels the goroutine that began a build while
// another waits for it: the build goes on, and the other gets the program.
func TestBuilderCancelled(t *testing.T) {
	waiting := make(chan struct{}, 2)
	c, b := newGated(t, false, func() { waiting <- struct{}{} })
	img := uniqueImage("test.CancelBuilder", "4")
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, _, err := c.ProgramContext(ctx, img)
		first <- err
	}()
	<-b.started
	await(t, waiting, "the first goroutine to wait for its build's goroutine")
	second := make(chan error, 1)
	go func() {
		p, _, err := c.ProgramContext(context.Background(), img)
		if err == nil {
			err = p.Release()
		}
		second <- err
	}()
	await(t, waiting, "the second goroutine to wait")
	cancel()
	within(t, "a cancelled builder", func() {
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled builder: %v, want context.Canceled", err)
		}
	})
	b.open()
	if err := <-second; err != nil {
		t.Errorf("the waiter: %v", err)
	}
	if s := c.Stats(); s.Builds != 1 || s.Programs != 1 {
		t.Errorf("stats %+v, want 1 build and 1 program", s)
	}
}

// TestAbandonedBuildStops cancels the only goroutine that waits for a
// build that itself waits for another process's build lock: with no one
// waiting, the build stops waiting for the lock, and leaves the cache.
func TestAbandonedBuildStops(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true}, true)
	img := uniqueImage("test.Abandoned", "5")
	k := c.keyOf(img, c.spec.Load())
	dk := diskcache.Key{Device: c.cfg.Devices[0], ImageID: img.ID, ImageHash: k.hash, SpecConsts: []byte(k.enc), Options: k.opts, ProgramName: k.name}
	holding, release := make(chan struct{}), make(chan struct{})
	other := make(chan error, 1)
	go func() { // another process's build of the same program, holding its lock
		_, _, err := c.cfg.Disk.GetOrBuild(context.Background(), dk, func() ([]byte, error) {
			close(holding)
			<-release
			return nil, errors.New("the other build failed")
		})
		other <- err
	}()
	<-holding
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	within(t, "a build waiting for a lock", func() {
		if _, _, err := c.ProgramContext(ctx, img); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ProgramContext: %v, want context.DeadlineExceeded", err)
		}
	})
	gone := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !gone; time.Sleep(5 * time.Millisecond) {
		c.mu.Lock()
		_, held := c.progs[k.full]
		c.mu.Unlock()
		gone = !held
	}
	close(release)
	<-other
	if !gone {
		t.Fatal("the abandoned build still waits for the lock")
	}
	if n := b.builds.Load(); n != 0 {
		t.Errorf("%d builds, want none", n)
	}
}

// TestProgramContextNotInMemory cancels a build of a cache that keeps
// nothing in memory: the caller returns, and the program the build makes
// after all is released, not leaked.
func TestProgramContextNotInMemory(t *testing.T) {
	c, tb := newCache(t, Config{}, false)
	gb := newGatedBuilder(tb)
	t.Cleanup(gb.drain)
	c.Init(gb, c.cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.ProgramContext(ctx, uniqueImage("test.NotInMemory", "6"))
		done <- err
	}()
	<-gb.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("ProgramContext: %v, want context.Canceled", err)
	}
	gb.drain() // the build has ended
	if n := gb.released.Load(); n != 1 {
		t.Errorf("the abandoned build's program released %d times, want 1", n)
	}
}
