package trace

import "sync"

// Recorder is a Subscriber that keeps every event it receives, for tests
// and tools. It is safe for concurrent use; the zero Recorder is ready.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// HandleEvent implements Subscriber.
func (r *Recorder) HandleEvent(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events received so far, in order of receipt.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Reset discards the events received so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events = r.events[:0]
	r.mu.Unlock()
}
