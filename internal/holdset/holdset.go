// Package holdset is a set of a backend's queues that a call holds while it
// enqueues on them, without the set's lock, and that a queue leaves only
// once no call holds it: the driver call that destroys a queue then never
// runs under one that enqueues on it, and no lock is held across either.
// rt/cuda's frees record an event on the streams of a context's queues
// (rt/cuda's pool.go), and rt/opencl's deferred releases enqueue a marker
// on its queues (rt/opencl's release.go).
package holdset

import "sync"

// A Set is a set of queues. Its zero value is an empty set.
type Set[Q comparable] struct {
	mu    sync.Mutex // protects the fields below; held across no driver call
	list  []Q
	holds map[Q]int  // the calls that hold each queue now
	left  *sync.Cond // signalled when a hold ends; its L is &mu
}

// Add puts q in the set.
func (s *Set[Q]) Add(q Q) {
	s.mu.Lock()
	s.list = append(s.list, q)
	s.mu.Unlock()
}

// Remove takes q out of the set, so that later holds leave it out, and
// returns once no call holds it.
func (s *Set[Q]) Remove(q Q) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.list {
		if x == q {
			s.list = append(s.list[:i], s.list[i+1:]...)
			break
		}
	}
	for s.holds[q] > 0 {
		s.cond().Wait()
	}
}

// Hold returns the set's queues, held until Unhold.
func (s *Set[Q]) Hold() []Q {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == nil {
		s.holds = make(map[Q]int)
	}
	qs := append([]Q(nil), s.list...)
	for _, q := range qs {
		s.holds[q]++
	}
	return qs
}

// Unhold ends Hold's holds of qs.
func (s *Set[Q]) Unhold(qs []Q) {
	s.mu.Lock()
	for _, q := range qs {
		if s.holds[q]--; s.holds[q] == 0 {
			delete(s.holds, q)
		}
	}
	c := s.cond()
	s.mu.Unlock()
	c.Broadcast()
}

// cond returns left, made on first use; s.mu is held.
func (s *Set[Q]) cond() *sync.Cond {
	if s.left == nil {
		s.left = sync.NewCond(&s.mu)
	}
	return s.left
}
