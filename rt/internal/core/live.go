package core

import (
	"fmt"
	"sync"
	"weak"

	"github.com/dgen-go/dgen/rt/driver"
)

// What a context made for its user and Close releases.
//
// Every driver object that a context hands its user to release (Free or
// Release) is live in the context's liveSet from the moment it is made
// until it is released: buffers from NewBuffer and their views, images
// from NewImage, pinned memory, the storage of device globals, events,
// and rt/raw's kernels and programs loaded from binaries. Close releases
// every one still live, so that nothing a context made outlives it, on a
// backend whose objects keep their context alive (OpenCL's reference
// counts) as on one whose context takes them along (CUDA). The allocators
// (allocator.go), command graphs (graph.go), kernel instances
// (instance.go) and the program cache release their own objects at Close.
//
// Exactly one party releases each object: its owner (Free, Release), the
// cleanup of an object released when it becomes unreachable (views and
// events), or Close. The owner and the cleanup release an object only if
// they remove it from the set, inside the context's enter; once Close has
// begun, enter fails and they leave it to Close, which takes the whole
// set after the calls in progress have returned (drain), so that no
// release runs after Close has released the driver's context. The rule
// this gives the user (after Close, Free and Release return nil) is stated
// in rt's package documentation, under "Free, Release and Close".

// A liveObject is what Close releases of a live object that its owner did
// not release. Each kind implements it beside its type: *Mem (buffer.go),
// *pinnedMem (pinned.go), *RawKernel (kernel.go) and *builtProgram
// (program.go); events and views are listed apart (addEvent, addView).
type liveObject interface {
	// releaseLive releases the object. Its owner calls it once it has
	// removed the object from the set, Close once it has taken the set,
	// after every call in progress has returned and the queues have
	// drained.
	releaseLive() error
	// describe names the object in Close's errors.
	describe() string
}

// liveSet is a context's live objects: those held until released, views,
// which are released when they become unreachable too and are therefore
// kept under weak pointers, with the sub-buffer that Close releases if the
// view is gone, and events, by the part of the Event that holds its driver
// event (eventState), in a list: an event is made and released at every
// launch that asks for one.
type liveSet struct {
	mu     sync.Mutex
	objs   map[liveObject]struct{}
	views  map[weak.Pointer[Mem]]driver.Buffer
	events *eventState // the first of the list
	nevent int
}

// add makes o live. It is called inside an enter, the context's or a
// queue's, so never after Close took the set.
func (s *liveSet) add(o liveObject) {
	s.mu.Lock()
	if s.objs == nil {
		s.objs = make(map[liveObject]struct{})
	}
	s.objs[o] = struct{}{}
	s.mu.Unlock()
}

// addView makes the view v, whose sub-buffer is drv, live.
func (s *liveSet) addView(v weak.Pointer[Mem], drv driver.Buffer) {
	s.mu.Lock()
	if s.views == nil {
		s.views = make(map[weak.Pointer[Mem]]driver.Buffer)
	}
	s.views[v] = drv
	s.mu.Unlock()
}

// addEvent makes the event e live.
func (s *liveSet) addEvent(e *eventState) {
	s.mu.Lock()
	e.next, e.listed = s.events, true
	if e.next != nil {
		e.next.prev = e
	}
	s.events = e
	s.nevent++
	s.mu.Unlock()
}

// remove, removeView and removeEvent report whether an object was live,
// and end it: their caller releases it. They are called inside the
// context's enter.
func (s *liveSet) remove(o liveObject) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.objs[o]
	delete(s.objs, o)
	return ok
}

func (s *liveSet) removeView(v weak.Pointer[Mem]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.views[v]
	delete(s.views, v)
	return ok
}

func (s *liveSet) removeEvent(e *eventState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !e.listed {
		return false
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.events = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.listed = nil, nil, false
	s.nevent--
	return true
}

// liveEvents returns the number of live events.
func (s *liveSet) liveEvents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nevent
}

// count returns the number of live objects.
func (s *liveSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.objs) + len(s.views) + s.nevent
}

// closeLive releases every live object: events, then views, then the
// rest (memory, kernels, programs). Close calls it after the queues have
// drained and the graphs are released, before the allocators, the queues
// and the programs go.
func (c *Context) closeLive() []error {
	s := &c.live
	s.mu.Lock()
	objs, views, events := s.objs, s.views, s.events
	s.objs, s.views, s.events, s.nevent = nil, nil, nil, 0
	for e := events; e != nil; e = e.next {
		e.listed = false
	}
	s.mu.Unlock()
	var errs []error
	for e := events; e != nil; e = e.next {
		if err := e.closeRelease(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release event: %w", err))
		}
	}
	for w, drv := range views {
		if v := w.Value(); v != nil {
			v.cleanup.Stop()
		}
		if err := drv.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release view: %w", err))
		}
	}
	for o := range objs {
		if err := o.releaseLive(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release %s: %w", o.describe(), err))
		}
	}
	return errs
}

// ownerRelease releases o for its owner (Free, Release): inside the
// context's enter, and only if o is still live. Once Close has begun, or
// taken o, there is nothing to do: Close releases it.
func (c *Context) ownerRelease(o liveObject) error {
	if c.enter() != nil {
		return nil // Close releases it
	}
	defer c.exit()
	if !c.live.remove(o) {
		return nil
	}
	return o.releaseLive()
}

// forgetView releases the sub-buffer of a view that became unreachable,
// for its cleanup, unless Close has it. (An Event's cleanup is
// forgetEvent, event.go.)
func (c *Context) forgetView(v weak.Pointer[Mem], drv driver.Buffer) {
	if c.enter() != nil {
		return // Close releases it
	}
	defer c.exit()
	if c.live.removeView(v) {
		drv.Release() // nobody waits for a cleanup's error
	}
}
