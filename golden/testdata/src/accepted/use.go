package accepted

import "github.com/dgen-go/dgen/rt"

// released returns err, or releases ev.
func released(ev *rt.Event, err error) error {
	if err != nil {
		return err
	}
	return ev.Release()
}

// Run launches Move twice as user code does, through the generated
// methods: while dgen loads the package they do not exist yet, and what
// follows from that (released's arguments) is no error of the package's.
func Run(q *rt.Queue, m *Move) error {
	if err := m.Enqueue(q, rt.Range1(1)); err != nil {
		return err
	}
	return released(m.EnqueueEvent(q, rt.Range1(1)))
}
