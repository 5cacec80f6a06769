package core

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
)

// hostGlobal calls use with the host memory of g, an image-scope global in
// no program, in c: one zero-initialised value per context, as the storage
// of a global in a program is one per context and device.
func (c *Context) hostGlobal(g *desc.Global, use func([]byte)) {
	c.decls.mu.Lock()
	defer c.decls.mu.Unlock()
	h, ok := c.decls.host[g]
	if !ok {
		if c.decls.host == nil {
			c.decls.host = make(map[*desc.Global][]byte)
		}
		h = make([]byte, g.Size())
		c.decls.host[g] = h
	}
	use(h)
}

// globalMem returns the storage of g on q's device: one zero-initialised
// buffer per (global, device), or per (global, program, device) for image
// scope. The program is its descriptor, not a variant of it: every
// specialization-constant variant of a program binds the same storage
// (rt.DeviceGlobal documents it). prog is the program whose image holds an
// image-scope global. ready reports that the storage's zero fill is known
// to have completed on the device: until then a kernel instance must not
// keep the storage for a launch on another queue (bindHidden asks again),
// since q alone is ordered after the fill.
//
// Nothing here waits for the device: the first caller for a key allocates
// the storage and enqueues its zero fill on q, in order before whatever q
// runs next, and a caller on another queue makes its queue wait for the
// fill on the device (a marker), so that a launch whose first use makes a
// global returns as fast as any launch, however much work q holds. The
// declarations' lock is not held across a driver call: later callers for
// a key wait for the first one's allocation and enqueue alone. A failure
// is returned to the callers that waited, and the next call tries again.
func (q *Queue) globalMem(g *desc.Global, prog *desc.Program) (m *Mem, ready bool, err error) {
	// Close waits for the call, so that every slot is done when it frees
	// them.
	if err := q.enter(); err != nil {
		return nil, false, err
	}
	defer q.exit()
	if !g.ImageScope {
		prog = nil
	}
	if h := q.global.Load(); h != nil && h.g == g && h.prog == prog {
		return h.s.m, h.s.filled(), nil
	}
	s, err := q.globalSlot(g, prog)
	if err != nil {
		return nil, false, err
	}
	if ready, err = s.orderOn(q); err != nil {
		return nil, false, err
	}
	q.global.Store(&globalHit{g: g, prog: prog, s: s})
	return s.m, ready, nil
}

// globalHit is a device global's storage on a queue's device, which the
// queue has been ordered after (globalSlot.orderOn).
type globalHit struct {
	g    *desc.Global
	prog *desc.Program // the program of an image-scope global, else nil
	s    *globalSlot
}

// globalSlot is globalMem's lookup in the context's table of storage,
// called inside enter: the slot, made and its fill enqueued on q when it
// was not there.
func (q *Queue) globalSlot(g *desc.Global, prog *desc.Program) (*globalSlot, error) {
	c := q.ctx
	key := globalKey{g: g, prog: prog, dev: q.dev.index}
	c.decls.mu.Lock()
	s, ok := c.decls.globals[key]
	if !ok {
		if c.decls.globals == nil {
			c.decls.globals = make(map[globalKey]*globalSlot)
		}
		s = &globalSlot{done: make(chan struct{})}
		c.decls.globals[key] = s
	}
	c.decls.mu.Unlock()
	if ok {
		<-s.done
		return s, s.err
	}
	s.m, s.fill, s.err = q.newGlobalMem(g)
	s.fillQ = q
	if s.err != nil {
		c.decls.mu.Lock()
		delete(c.decls.globals, key)
		c.decls.mu.Unlock()
	}
	close(s.done)
	return s, s.err
}

// globalZero is the pattern that zeroes the storage of a device global:
// one byte, which divides every size.
var globalZero = []byte{0}

// newGlobalMem allocates the storage of g on q's device and enqueues its
// zero fill on q, without waiting for it: the fill's event is returned.
func (q *Queue) newGlobalMem(g *desc.Global) (*Mem, driver.Event, error) {
	size := max(g.Size(), 4)
	m, err := q.ctx.newMem(size)
	if err != nil {
		return nil, nil, fmt.Errorf("storage of device global %s: %w", g.ID, err)
	}
	ev, err := q.drv.FillBuffer(m.drv, globalZero, 0, size, nil)
	if err != nil {
		m.Free()
		return nil, nil, q.ctx.failed(q, fmt.Errorf("zero device global %s on %q: %w", g.ID, q.dev.Name, err))
	}
	return m, ev, nil
}

// declState is a context's storage of device globals.
type declState struct {
	mu      sync.Mutex
	globals map[globalKey]*globalSlot
	host    map[*desc.Global][]byte // image-scope globals in no program, in host memory
}

type globalKey struct {
	g    *desc.Global
	prog *desc.Program // nil unless image scope
	dev  int
}

// globalSlot is the storage of one global on one device, made once: the
// goroutine that made the slot allocates the storage and enqueues its zero
// fill outside the declarations' lock, and others wait for that on done.
//
// m, fill, fillQ and err are set before done is closed and never change
// after. fill is released by Close alone (releaseDecls): other goroutines
// may pass it to the driver at any time (orderOn).
type globalSlot struct {
	done  chan struct{}
	m     *Mem
	err   error
	fill  driver.Event // the zero fill of m
	fillQ *Queue       // the queue fill was enqueued on

	// complete is set once fill is known to have completed.
	complete atomic.Bool

	mu      sync.Mutex // guards ordered; never held across a driver call
	ordered []driver.Queue
}

// filled reports whether the zero fill of s has completed, asking the
// driver (without waiting) while it is not known to have.
func (s *globalSlot) filled() bool {
	if s.complete.Load() {
		return true
	}
	if st, err := s.fill.Status(); err != nil || st != driver.StatusComplete {
		return false
	}
	s.complete.Store(true)
	return true
}

// orderOn makes the commands that q enqueues from now on run after the
// zero fill of s, without waiting for it on the host where q's device
// can wait: q's driver queue runs after the fill in order if the fill was
// enqueued there, and otherwise is made to wait for it by a marker (once
// per driver queue). A queue that records a graph waits on the host, since
// the graph may run on any queue later. It reports whether the fill has
// completed.
func (s *globalSlot) orderOn(q *Queue) (bool, error) {
	if s.filled() {
		return true, nil
	}
	if q.rec.Load() != nil {
		if err := s.fill.Wait(); err != nil {
			return false, q.ctx.failed(q, fmt.Errorf("zero storage of a device global on %q: %w", q.dev.Name, err))
		}
		s.complete.Store(true)
		return true, nil
	}
	from := s.fillQ.drv
	if q.drv == from {
		return false, nil
	}
	s.mu.Lock()
	done := slices.Contains(s.ordered, q.drv)
	s.mu.Unlock()
	if done {
		return false, nil
	}
	// OpenCL guarantees a wait on another queue's event only once that
	// queue has been flushed.
	if err := from.Flush(); err != nil {
		return false, q.ctx.failed(q, fmt.Errorf("order after the zero fill of a device global: flush queue %d of %q: %w", s.fillQ.id, q.dev.Name, err))
	}
	ev, err := q.drv.Marker([]driver.Event{s.fill})
	if err != nil {
		return false, q.ctx.failed(q, fmt.Errorf("order after the zero fill of a device global: marker on queue %d of %q: %w", q.id, q.dev.Name, err))
	}
	ev.Release()
	s.mu.Lock()
	s.ordered = append(s.ordered, q.drv)
	s.mu.Unlock()
	return false, nil
}
