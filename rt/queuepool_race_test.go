package rt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// The backend "hookq": the fake backend, with hooks that hold a queue's
// creation and a marker's release inside the driver, so that a test
// widens the windows in which the queue pool must keep its invariants.
func init() { driver.Register("hookq", hookBackend{}) }

// hookNewQueue, if set, is called at the start of every NewQueue after
// the context's first (its default queue).
var hookNewQueue atomic.Pointer[func()]

// hookMarkerRelease, if set, is called at the start of the Release of
// every marker of a queue other than the context's first.
var hookMarkerRelease atomic.Pointer[func()]

// hookFinish, if set, is called by the Finish of every queue other than
// the context's first, and its error is Finish's.
var hookFinish atomic.Pointer[func() error]

type hookBackend struct{ fakeBackend }

func (b hookBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.fakeBackend.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return &hookContext{fakeContext: c.(*fakeContext)}, nil
}

type hookContext struct {
	*fakeContext
	queues atomic.Int32
}

func (c *hookContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	id := c.queues.Add(1) - 1
	if h := hookNewQueue.Load(); h != nil && id > 0 {
		(*h)()
	}
	return hookQueue{id: id}, nil
}

type hookQueue struct {
	fakeQueue
	id int32
}

func (q hookQueue) Finish() error {
	if h := hookFinish.Load(); h != nil && q.id > 0 {
		return (*h)()
	}
	return nil
}

func (q hookQueue) Marker(wait []driver.Event) (driver.Event, error) {
	return hookEvent{fakeEvent: newFakeEvent(), queue: q.id}, nil
}

type hookEvent struct {
	fakeEvent
	queue int32
}

func (e hookEvent) Release() error {
	if h := hookMarkerRelease.Load(); h != nil && e.queue > 0 {
		(*h)()
	}
	return nil
}

// openHook opens a context on the hookq backend with cfg.
func openHook(t *testing.T, cfg rt.Config) *rt.Context {
	t.Helper()
	t.Cleanup(func() { hookNewQueue.Store(nil); hookMarkerRelease.Store(nil); hookFinish.Store(nil) })
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	cfg.Backend, cfg.Device, cfg.Cache = "hookq", "cpu", &cc
	ctx, err := rt.OpenConfig(withEnv(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// blockOnce returns a hook that, the first time it is called, signals
// entered and blocks until release is closed; later calls return at once.
func blockOnce() (hook func(), entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(entered)
			<-release
		})
	}, entered, release
}

// TestAcquireBoundNeverShared: a queue that AcquireQueueContext takes
// from the idle queues is the caller's alone from the moment it is taken:
// an AcquireQueue while the taker releases the marker of the queue's last
// request (a driver call) must not share it.
func TestAcquireBoundNeverShared(t *testing.T) {
	ctx := openHook(t, rt.Config{QueuePool: 1})
	buf, err := rt.NewBuffer[int32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ctx.AcquireQueueContext(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := buf.Fill(q, 1); err != nil { // leaves work: ReleaseQueue marks it
		t.Fatal(err)
	}
	if err := ctx.ReleaseQueue(q); err != nil {
		t.Fatal(err)
	}
	hook, entered, release := blockOnce()
	hookMarkerRelease.Store(&hook)
	type got struct {
		q   *rt.Queue
		err error
	}
	bound := make(chan got, 1)
	go func() {
		q, err := ctx.AcquireQueueContext(context.Background(), nil) // takes q, releases its marker
		bound <- got{q, err}
	}()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("AcquireQueueContext released no marker of the idle queue's last request")
	}
	shared, err := ctx.AcquireQueue()
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	b := <-bound
	if b.err != nil {
		t.Fatal(b.err)
	}
	if shared == b.q {
		t.Errorf("AcquireQueue shared queue %p, which AcquireQueueContext holds alone", shared)
	}
	ctx.ReleaseQueue(shared)
	ctx.ReleaseQueue(b.q)
}

// TestQueueAheadNoLockAcrossRelease: the pacing of a bound queue releases
// the marker it waited for with no lock held, so that another goroutine's
// command on the queue does not wait for that driver call.
func TestQueueAheadNoLockAcrossRelease(t *testing.T) {
	ctx := openHook(t, rt.Config{QueuePool: 1, MaxQueueAhead: 2})
	buf, err := rt.NewBuffer[int32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ctx.AcquireQueueContext(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.ReleaseQueue(q)
	for i := range 2 { // a marker after each: two ahead
		if err := buf.Fill(q, int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	hook, entered, release := blockOnce()
	hookMarkerRelease.Store(&hook)
	third := make(chan error, 1)
	go func() { third <- buf.Fill(q, 3) }() // waits for the oldest marker, then releases it
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("the third command released no marker")
	}
	other := make(chan error, 1)
	go func() { other <- buf.Fill(q, 4) }()
	select {
	case err := <-other:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(2 * time.Second):
		t.Error("a command on the bound queue waited for another's release of a marker (a lock held across Event.Release)")
	}
	close(release)
	if err := <-third; err != nil {
		t.Error(err)
	}
}

// TestAcquireContextPoolBound: concurrent AcquireQueueContext calls on a
// pool with no queue yet make no more than Config.QueuePool queues: past
// it they wait for a release.
func TestAcquireContextPoolBound(t *testing.T) {
	ctx := openHook(t, rt.Config{QueuePool: 1})
	live := core.LiveQueues(cx(ctx))
	var made atomic.Int32
	first := make(chan struct{})
	release := make(chan struct{})
	hook := func() {
		if made.Add(1) == 1 {
			close(first)
		}
		<-release
	}
	hookNewQueue.Store(&hook)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	acquire := func() {
		defer wg.Done()
		q, err := ctx.AcquireQueueContext(context.Background(), nil)
		if err != nil {
			errs <- err
			return
		}
		errs <- ctx.ReleaseQueue(q)
	}
	wg.Add(1)
	go acquire()
	<-first
	for range 3 {
		wg.Add(1)
		go acquire()
	}
	time.Sleep(200 * time.Millisecond) // the others reach the pool meanwhile
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := core.LiveQueues(cx(ctx)) - live; got != 1 {
		t.Errorf("the pool made %d queues (%d driver queues made), want at most Config.QueuePool = 1", got, made.Load())
	}
}

// TestAcquireContextWakesOnClose: Close wakes every AcquireQueueContext
// that waits for a queue of the pool, even one that entered before Close
// and reached the pool's lock after Close woke the waiters: it returns
// an error wrapping ErrClosed rather than wait for ever.
func TestAcquireContextWakesOnClose(t *testing.T) {
	for iter := range 200 {
		if t.Failed() {
			break
		}
		func() {
			ctx := openHook(t, rt.Config{QueuePool: 1})
			held, err := ctx.AcquireQueue()
			if err != nil {
				t.Fatal(err)
			}
			share, err := ctx.AcquireQueue() // shares held
			if err != nil {
				t.Fatal(err)
			}
			const waiters = 64
			var wg sync.WaitGroup
			var waiting atomic.Int32
			errs := make(chan error, waiters)
			for range waiters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					waiting.Add(1)
					q, err := ctx.AcquireQueueContext(context.Background(), nil) // waits: held is the pool's one queue
					if err == nil {
						ctx.ReleaseQueue(q)
						err = fmt.Errorf("AcquireQueueContext got a queue while the pool's one queue was held")
					} else if !errors.Is(err, rt.ErrClosed) {
						err = fmt.Errorf("AcquireQueueContext after Close: %w, want ErrClosed", err)
					} else {
						err = nil
					}
					errs <- err
				}()
			}
			for waiting.Load() < waiters {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(time.Millisecond)
			ctx.ReleaseQueue(share) // wakes the waiters, which find no queue
			ctx.Close()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("iteration %d: AcquireQueueContext still waits 5s after Close", iter)
			}
			ctx.ReleaseQueue(held) // wakes them, if they still wait
			<-done
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
}

// TestShutdownWaitsForClose: a Shutdown beside a Close of the user's
// that is still finishing the queues returns only once that Close has
// finished, with its error, as each Shutdown promises ("once the context
// is closed, with Close's error"); before, the Shutdown's own Close
// returned nil at once, being the second.
func TestShutdownWaitsForClose(t *testing.T) {
	ctx := openHook(t, rt.Config{})
	q, err := ctx.AcquireQueue() // the context's second queue: Finish calls the hook
	if err != nil {
		t.Fatal(err)
	}
	errFinish := errors.New("finish held by the test")
	block, entered, release := blockOnce()
	hook := func() error { block(); return errFinish }
	hookFinish.Store(&hook)
	closed := make(chan error, 1)
	go func() { closed <- ctx.Close() }()
	<-entered // Close is finishing q
	shut := make(chan error, 1)
	go func() { shut <- ctx.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while Close was still finishing the queues", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-closed; !errors.Is(err, errFinish) {
		t.Fatalf("Close: %v, want the Finish's error", err)
	}
	if err := <-shut; !errors.Is(err, errFinish) {
		t.Errorf("Shutdown after a concurrent Close: %v, want that Close's error", err)
	}
	if err := ctx.ReleaseQueue(q); err != nil && !errors.Is(err, rt.ErrClosed) {
		t.Errorf("ReleaseQueue after Close: %v", err)
	}
}
