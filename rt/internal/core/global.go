package core

import (
	"fmt"
	"sync"
	"unsafe"

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
// (rt.DeviceGlobal documents it). prog is the program whose image holds an image-scope global. The
// declarations' lock is not held while the storage is allocated and
// zeroed (a blocking write): the first caller for a key makes it, later
// ones wait for that key alone. A failure is returned to the callers that
// waited, and the next call tries again.
func (q *Queue) globalMem(g *desc.Global, prog *desc.Program) (*Mem, error) {
	// Close waits for the call, so that every slot is done when it frees
	// them.
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.exit()
	if !g.ImageScope {
		prog = nil
	}
	if h := q.global.Load(); h != nil && h.g == g && h.prog == prog {
		return h.m, nil
	}
	m, err := q.globalSlot(g, prog)
	if err == nil {
		q.global.Store(&globalHit{g: g, prog: prog, m: m})
	}
	return m, err
}

// globalHit is a device global's storage on a queue's device.
type globalHit struct {
	g    *desc.Global
	prog *desc.Program // the program of an image-scope global, else nil
	m    *Mem
}

// globalSlot is globalMem's lookup in the context's table of storage,
// called inside enter.
func (q *Queue) globalSlot(g *desc.Global, prog *desc.Program) (*Mem, error) {
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
		return s.m, s.err
	}
	s.m, s.err = q.newGlobalMem(g)
	if s.err != nil {
		c.decls.mu.Lock()
		delete(c.decls.globals, key)
		c.decls.mu.Unlock()
	}
	close(s.done)
	return s.m, s.err
}

// newGlobalMem allocates and zeroes the storage of g on q's device.
func (q *Queue) newGlobalMem(g *desc.Global) (*Mem, error) {
	size := max(g.Size(), 4)
	m, err := q.ctx.newMem(size)
	if err != nil {
		return nil, fmt.Errorf("storage of device global %s: %w", g.ID, err)
	}
	zero := make([]byte, size)
	// A blocking write creates no event.
	if _, err := q.drv.WriteBuffer(m.drv, true, 0, size, unsafe.Pointer(&zero[0]), nil); err != nil {
		m.Free()
		return nil, q.ctx.failed(q, fmt.Errorf("zero device global %s on %q: %w", g.ID, q.dev.Name, err))
	}
	return m, nil
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
// goroutine that made the slot allocates and zeroes it outside the
// declarations' lock, and others wait for it on done.
type globalSlot struct {
	done chan struct{}
	m    *Mem
	err  error
}
