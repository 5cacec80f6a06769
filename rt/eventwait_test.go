package rt_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
)

// The backend "gatedevents" is the fake one with markers whose events
// complete when the test says so (gatedMarkers), so that a wait on one is
// still waiting when the test acts.
func init() { driver.Register("gatedevents", gatedBackend{}) }

type gatedBackend struct{ fakeBackend }

func (b gatedBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.fakeBackend.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return gatedContext{c.(*fakeContext)}, nil
}

type gatedContext struct{ *fakeContext }

func (c gatedContext) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return gatedQueue{}, nil
}

type gatedQueue struct{ fakeQueue }

// gatedMarkers, when set, makes the markers enqueued meanwhile gated events.
var gatedMarkers atomic.Pointer[gatedEvent]

func (q gatedQueue) Marker(wait []driver.Event) (driver.Event, error) {
	if g := gatedMarkers.Load(); g != nil {
		return g, nil
	}
	return q.fakeQueue.Marker(wait)
}

// gatedEvent completes when open is closed. onWait, if set, runs inside
// Wait, as another goroutine would while the wait goes on. It records
// whether it was used after its Release.
type gatedEvent struct {
	open         chan struct{}
	onWait       func()
	released     atomic.Bool
	afterRelease atomic.Int32
}

func newGatedEvent() *gatedEvent { return &gatedEvent{open: make(chan struct{})} }

func (e *gatedEvent) check() {
	if e.released.Load() {
		e.afterRelease.Add(1)
	}
}

func (e *gatedEvent) Wait() error {
	e.check()
	if f := e.onWait; f != nil {
		f()
	}
	<-e.open
	return nil
}

func (e *gatedEvent) Status() (driver.EventStatus, error) {
	e.check()
	select {
	case <-e.open:
		return driver.StatusComplete, nil
	default:
		return driver.StatusRunning, nil
	}
}

func (e *gatedEvent) Profile() (driver.Timing, error) {
	e.check()
	return driver.Timing{Queued: 1, Submitted: 2, Started: 3, Ended: 4}, nil
}

func (e *gatedEvent) Release() error {
	e.check()
	e.released.Store(true)
	return nil
}

// openGated opens a context on the gatedevents backend.
func openGated(t *testing.T, profiling bool) *rt.Context {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "gatedevents", Device: "cpu", Cache: &cc, Profiling: profiling}))
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// gatedMarker enqueues a marker on q whose event completes once the
// returned gatedEvent's open is closed.
func gatedMarker(t *testing.T, q *rt.Queue, g *gatedEvent) *rt.Event {
	t.Helper()
	gatedMarkers.Store(g)
	ev, err := q.Marker()
	gatedMarkers.Store(nil)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestWaitContextAfterRelease: once an Event is released, WaitContext is
// an error wrapping ErrReleased as Wait is, also when an earlier
// WaitContext left a background wait that has completed meanwhile; after
// the context's Close it wraps ErrClosed.
func TestWaitContextAfterRelease(t *testing.T) {
	for _, end := range []string{"Release", "Close"} {
		t.Run(end, func(t *testing.T) {
			ctx := openGated(t, false)
			closed := false
			t.Cleanup(func() {
				if !closed {
					ctx.Close()
				}
			})
			g := newGatedEvent()
			ev := gatedMarker(t, ctx.Queue(), g)
			short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			err := ev.WaitContext(short)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("WaitContext before the marker completes = %v, want DeadlineExceeded", err)
			}
			close(g.open)
			// The background wait completes.
			live, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := ev.WaitContext(live); err != nil {
				t.Fatalf("WaitContext once the marker completed = %v", err)
			}
			want := rt.ErrReleased
			if end == "Release" {
				if err := ev.Release(); err != nil {
					t.Fatal(err)
				}
			} else {
				want = rt.ErrClosed
				closed = true
				if err := ctx.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if err := ev.Wait(); !errors.Is(err, want) {
				t.Errorf("Wait after %s = %v, want %v", end, err, want)
			}
			if err := ev.WaitContext(live); !errors.Is(err, want) {
				t.Errorf("WaitContext after %s = %v, want %v", end, err, want)
			}
		})
	}
}

// TestTimingReleasedMeanwhile releases an Event while Timing waits for
// it, as another goroutine may: Timing must not read the times of the
// driver event that the wait released on its way out.
func TestTimingReleasedMeanwhile(t *testing.T) {
	ctx := openGated(t, true)
	defer ctx.Close()
	g := newGatedEvent()
	ev := gatedMarker(t, ctx.Queue(), g)
	var once sync.Once
	g.onWait = func() {
		once.Do(func() {
			if err := ev.Release(); err != nil {
				t.Error(err)
			}
			close(g.open)
		})
	}
	_, err := ev.Timing()
	if n := g.afterRelease.Load(); n > 0 {
		t.Errorf("Timing used the driver event %d times after its release", n)
	}
	if !errors.Is(err, rt.ErrReleased) {
		t.Errorf("Timing of an Event released while it waited = %v, want ErrReleased", err)
	}
}
