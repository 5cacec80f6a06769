package trace

// Range is a range of Go code named by the user, NVTX-style: the
// perfetto subscriber draws it on the host track of every queue, with the
// commands enqueued within it nested under it. Begin one with Tracer.Range
// and end it with End; ranges nest as calls do. The zero Range, which
// Tracer.Range returns when the task stream has no subscriber, does
// nothing.
type Range struct {
	t     *Tracer
	name  string
	begin int64
}

// Range begins a range called name, at the current host time. With no
// subscriber of StreamTask it costs one atomic load. A typical use:
//
//	defer ctx.Tracer().Range("solve").End()
func (t *Tracer) Range(name string) Range {
	if t == nil || !t.task.Enabled() {
		return Range{}
	}
	return Range{t: t, name: name, begin: t.Now()}
}

// End ends the range and emits UserRange. Ending a range twice emits it
// twice.
func (r Range) End() {
	if r.t == nil {
		return
	}
	subs, recs := r.t.task.wanting(UserRange), r.t.task.records(UserRange)
	if subs == nil && recs == nil {
		return
	}
	now := r.t.Now()
	if now <= r.begin {
		now = r.begin + 1
	}
	e := Event{Kind: UserRange, Stream: r.t.task, Time: now, Begin: r.begin, Name: r.name}
	for _, rf := range recs {
		rf.handle(&e)
	}
	deliver(subs, &e)
}

// Mark emits UserMark: an instant called name, at the current host time.
// With no subscriber of StreamTask it costs one atomic load.
func (t *Tracer) Mark(name string) {
	if t == nil {
		return
	}
	subs, recs := t.task.wanting(UserMark), t.task.records(UserMark)
	if subs != nil || recs != nil {
		e := Event{Kind: UserMark, Stream: t.task, Time: t.Now(), Name: name}
		for _, r := range recs {
			r.handle(&e)
		}
		deliver(subs, &e)
	}
}
