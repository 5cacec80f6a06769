package rt

import (
	"github.com/dgen-go/dgen/rt/trace"

	"fmt"
	"reflect"
	"unsafe"
)

// DeviceGlobal is a device global variable declared with //dgen:global: a
// value of T that kernels refer to by the variable's name. An ordinary
// global has one zero-initialised instance per device, shared by every
// program; a device_image_scope global has one per program image and
// device. T must be plain data.
//
// The host instance caches its registration, so that reaching a global's
// storage from its address takes no registry lookup.
type DeviceGlobal[T any] struct {
	info *globalInfo
}

func (g *DeviceGlobal[T]) bind(info *globalInfo) { g.info = info }

// Read returns the global's value on q's device.
func (g *DeviceGlobal[T]) Read(q *Queue, wait ...*Event) (T, error) {
	var v T
	err := g.copy(q, "read", 0, unsafe.Pointer(&v), int64(unsafe.Sizeof(v)), false, wait)
	return v, err
}

// Write sets the global's value on q's device and waits until it is done.
func (g *DeviceGlobal[T]) Write(q *Queue, v T, wait ...*Event) error {
	return g.copy(q, "write", 0, unsafe.Pointer(&v), int64(unsafe.Sizeof(v)), true, wait)
}

// ReadAt copies len(dst) bytes of the global's value, from byte off, into
// dst. A span outside the value is an error wrapping ErrOutOfRange, and
// dst is left alone.
func (g *DeviceGlobal[T]) ReadAt(q *Queue, off int, dst []byte, wait ...*Event) error {
	return g.copy(q, "read", int64(off), unsafe.Pointer(unsafe.SliceData(dst)), int64(len(dst)), false, wait)
}

// WriteAt copies src into the global's value from byte off. A span
// outside the value is an error wrapping ErrOutOfRange, and nothing is
// written.
func (g *DeviceGlobal[T]) WriteAt(q *Queue, off int, src []byte, wait ...*Event) error {
	return g.copy(q, "write", int64(off), unsafe.Pointer(unsafe.SliceData(src)), int64(len(src)), true, wait)
}

func (g *DeviceGlobal[T]) copy(q *Queue, op string, off int64, p unsafe.Pointer, n int64, write bool, wait []*Event) error {
	if g == nil {
		return fmt.Errorf("%s device global: %w: nil global", op, ErrInvalidArgument)
	}
	info := g.info
	if info == nil {
		return fmt.Errorf("%s device global %v: %w", op, reflect.TypeFor[T](), errNotRegistered)
	}
	switch {
	case write && (info.access == hostRead || info.access == hostNone):
		return fmt.Errorf("%s device global %s: %w: host_access=%v", op, info.id, ErrInvalidArgument, info.access)
	case !write && (info.access == hostWrite || info.access == hostNone):
		return fmt.Errorf("%s device global %s: %w: host_access=%v", op, info.id, ErrInvalidArgument, info.access)
	}
	if off < 0 || n < 0 || off > info.size || n > info.size-off {
		return fmt.Errorf("%s device global %s: %w: bytes [%d, %d) of %d", op, info.id, ErrOutOfRange, off, off+n, info.size)
	}
	if info.imageScope && info.prog == nil {
		// In no program: the value lives in the context's host memory.
		for _, e := range wait {
			if err := e.Wait(); err != nil {
				return fmt.Errorf("%s device global %s: %w", op, info.id, err)
			}
		}
		if err := q.enter(); err != nil {
			return fmt.Errorf("%s device global %s: %w", op, info.id, err)
		}
		defer q.ctx.exit()
		q.ctx.hostGlobal(info, func(host []byte) {
			b := unsafe.Slice((*byte)(p), n)
			if write {
				copy(host[off:], b)
			} else {
				copy(b, host[off:off+n])
			}
		})
		return nil
	}
	// The storage must outlive the transfer: hold Close off until it is
	// done.
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s device global %s: %w", op, info.id, err)
	}
	defer q.ctx.exit()
	m, err := q.globalMem(info, info.prog)
	if err != nil {
		return fmt.Errorf("%s device global %s: %w", op, info.id, err)
	}
	drv, err := m.driverBuffer()
	if err != nil {
		return fmt.Errorf("%s device global %s: %w", op, info.id, err)
	}
	name, kind := "read device global", trace.GlobalRead // constants: no concatenation per call
	if write {
		name, kind = "write device global", trace.GlobalWrite
	}
	// Frames between transfer's caller and the user: copy's caller, the
	// exported Read, Write, ReadAt or WriteAt.
	return q.transfer(xfer{op: name, kind: kind, buf: drv, off: off, size: n, host: p}, wait, 1)
}

// hostGlobal calls use with the host memory of g, an image-scope global in
// no program, in c: one zero-initialised value per context, as the storage
// of a global in a program is one per context and device.
func (c *Context) hostGlobal(g *globalInfo, use func([]byte)) {
	c.decls.mu.Lock()
	defer c.decls.mu.Unlock()
	h, ok := c.decls.host[g]
	if !ok {
		if c.decls.host == nil {
			c.decls.host = make(map[*globalInfo][]byte)
		}
		h = make([]byte, g.size)
		c.decls.host[g] = h
	}
	use(h)
}

// globalMem returns the storage of g on q's device: one zero-initialised
// buffer per (global, device), or per (global, program, device) for image
// scope. prog is the program whose image holds an image-scope global. The
// declarations' lock is not held while the storage is allocated and
// zeroed (a blocking write): the first caller for a key makes it, later
// ones wait for that key alone. A failure is returned to the callers that
// waited, and the next call tries again.
func (q *Queue) globalMem(g *globalInfo, prog *programInfo) (*Mem, error) {
	// Close waits for the call, so that every slot is done when it frees
	// them.
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	c := q.ctx
	if !g.imageScope {
		prog = nil
	}
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
func (q *Queue) newGlobalMem(g *globalInfo) (*Mem, error) {
	size := max(g.size, 4)
	m, err := q.ctx.NewMem(size)
	if err != nil {
		return nil, fmt.Errorf("storage of device global %s: %w", g.id, err)
	}
	zero := make([]byte, size)
	// A blocking write creates no event.
	if _, err := q.drv.WriteBuffer(m.drv, true, 0, size, unsafe.Pointer(&zero[0]), nil); err != nil {
		m.Free()
		return nil, fmt.Errorf("zero device global %s on %q: %w", g.id, q.dev.Name, err)
	}
	return m, nil
}
