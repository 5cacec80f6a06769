package holdset

import (
	"slices"
	"sync"
	"testing"
	"time"
)

type queue struct{ int }

// TestSet: a call holds the queues that the set has when it starts; a
// queue removed meanwhile leaves the set at once, for later calls, but
// Remove returns only once every call that holds it has ended, so that
// the queue is not destroyed while a call enqueues on it.
func TestSet(t *testing.T) {
	var s Set[*queue]
	q1, q2 := new(queue), new(queue)
	s.Add(q1)
	s.Add(q2)
	a := s.Hold()
	b := s.Hold()
	if !slices.Equal(a, []*queue{q1, q2}) {
		t.Fatalf("Hold = %v, want both queues", a)
	}
	removed := make(chan struct{})
	go func() {
		s.Remove(q1)
		close(removed)
	}()
	time.Sleep(20 * time.Millisecond) // Remove has taken q1 out of the list
	if c := s.Hold(); !slices.Equal(c, []*queue{q2}) {
		t.Errorf("Hold after Remove began = %v, want only the queue left", c)
	} else {
		s.Unhold(c)
	}
	for i, h := range [][]*queue{a, b} {
		select {
		case <-removed:
			t.Fatalf("Remove returned while %d calls held the queue", 2-i)
		case <-time.After(50 * time.Millisecond):
		}
		s.Unhold(h)
	}
	select {
	case <-removed:
	case <-time.After(5 * time.Second):
		t.Fatal("Remove did not return once no call held the queue")
	}
	if len(s.holds) != 0 {
		t.Errorf("holds left: %v", s.holds)
	}
}

// TestSetConcurrent runs holds and removals at once (go test -race checks
// the locking).
func TestSetConcurrent(t *testing.T) {
	var s Set[*queue]
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		q := new(queue)
		s.Add(q)
		go func() {
			defer wg.Done()
			for range 100 {
				s.Unhold(s.Hold())
			}
		}()
		go func() {
			defer wg.Done()
			s.Remove(q)
		}()
	}
	wg.Wait()
	if qs := s.Hold(); len(qs) != 0 {
		t.Errorf("queues left after every Remove: %d", len(qs))
	}
}
