package cuda

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestStreamSet: a free holds the queues that the set has when it starts;
// a queue removed meanwhile leaves the set at once, for later frees, but
// remove returns only once every free that holds it has ended, so that
// its stream is not destroyed while a free records on it.
func TestStreamSet(t *testing.T) {
	var s streamSet
	q1, q2 := new(queue), new(queue)
	s.add(q1)
	s.add(q2)
	a := s.hold()
	b := s.hold()
	if !slices.Equal(a, []*queue{q1, q2}) {
		t.Fatalf("hold = %v, want both queues", a)
	}
	removed := make(chan struct{})
	go func() {
		s.remove(q1)
		close(removed)
	}()
	time.Sleep(20 * time.Millisecond) // remove has taken q1 out of the list
	if c := s.hold(); !slices.Equal(c, []*queue{q2}) {
		t.Errorf("hold after remove began = %v, want only the queue left", c)
	} else {
		s.unhold(c)
	}
	for i, h := range [][]*queue{a, b} {
		select {
		case <-removed:
			t.Fatalf("remove returned while %d frees held the queue", 2-i)
		case <-time.After(50 * time.Millisecond):
		}
		s.unhold(h)
	}
	select {
	case <-removed:
	case <-time.After(5 * time.Second):
		t.Fatal("remove did not return once no free held the queue")
	}
	if len(s.holds) != 0 {
		t.Errorf("holds left: %v", s.holds)
	}
}

// TestStreamSetConcurrent runs frees and queue removals at once (go test
// -race checks the locking).
func TestStreamSetConcurrent(t *testing.T) {
	var s streamSet
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		q := new(queue)
		s.add(q)
		go func() {
			defer wg.Done()
			for range 100 {
				s.unhold(s.hold())
			}
		}()
		go func() {
			defer wg.Done()
			s.remove(q)
		}()
	}
	wg.Wait()
	if qs := s.hold(); len(qs) != 0 {
		t.Errorf("queues left after every remove: %d", len(qs))
	}
}
