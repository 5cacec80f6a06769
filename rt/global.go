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
	info *GlobalInfo
}

// RegisterDeviceGlobal registers g. Generated init functions call it.
// The element size is T's.
func RegisterDeviceGlobal[T any](g *DeviceGlobal[T], info *GlobalInfo) {
	info.Size = elemSize[T]()
	if got, ok := registerDecl(info.ID, info).(*GlobalInfo); ok {
		g.info = got
	}
}

// Info returns the global's registration, or an error wrapping
// ErrNotGenerated.
func (g *DeviceGlobal[T]) Info() (*GlobalInfo, error) {
	if g == nil || g.info == nil {
		return nil, fmt.Errorf("device global %v: %w", reflect.TypeFor[T](), ErrNotGenerated)
	}
	return g.info, nil
}

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
		_, err := g.Info()
		return fmt.Errorf("%s %w", op, err)
	}
	switch {
	case write && (info.HostAccess == HostRead || info.HostAccess == HostNone):
		return fmt.Errorf("%s device global %s: %w: host_access=%v", op, info.ID, ErrInvalidArgument, info.HostAccess)
	case !write && (info.HostAccess == HostWrite || info.HostAccess == HostNone):
		return fmt.Errorf("%s device global %s: %w: host_access=%v", op, info.ID, ErrInvalidArgument, info.HostAccess)
	}
	if off < 0 || n < 0 || off > info.Size || n > info.Size-off {
		return fmt.Errorf("%s device global %s: %w: bytes [%d, %d) of %d", op, info.ID, ErrOutOfRange, off, off+n, info.Size)
	}
	if info.ImageScope && info.program() == nil {
		// In no program: the value lives in host memory.
		for _, e := range wait {
			if err := e.Wait(); err != nil {
				return fmt.Errorf("%s device global %s: %w", op, info.ID, err)
			}
		}
		info.hmu.Lock()
		defer info.hmu.Unlock()
		if info.host == nil {
			info.host = make([]byte, info.Size)
		}
		b := unsafe.Slice((*byte)(p), n)
		if write {
			copy(info.host[off:], b)
		} else {
			copy(b, info.host[off:off+n])
		}
		return nil
	}
	// The storage must outlive the transfer: hold Close off until it is
	// done.
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s device global %s: %w", op, info.ID, err)
	}
	defer q.ctx.exit()
	m, err := q.globalMem(info, info.program())
	if err != nil {
		return fmt.Errorf("%s device global %s: %w", op, info.ID, err)
	}
	drv, err := m.Driver()
	if err != nil {
		return fmt.Errorf("%s device global %s: %w", op, info.ID, err)
	}
	name, kind := op+" device global", trace.GlobalRead
	if write {
		kind = trace.GlobalWrite
	}
	// Frames between transfer's caller and the user: copy's caller, the
	// exported Read, Write, ReadAt or WriteAt.
	return q.transfer(name, kind, func(dw []DriverEvent, blocking bool) (DriverEvent, error) {
		if write {
			return q.drv.WriteBuffer(drv, blocking, off, n, p, dw)
		}
		return q.drv.ReadBuffer(drv, blocking, off, n, p, dw)
	}, n, wait, 1)
}

// program returns, for an image-scope global, the one program that uses
// it, or nil. The generator rejects an image-scope global in two programs.
func (g *GlobalInfo) program() *ProgramInfo {
	if !g.ImageScope {
		return nil
	}
	g.once.Do(func() {
		decls.RLock()
		defer decls.RUnlock()
		var best *ProgramInfo
		for _, v := range decls.byID {
			p, ok := v.(*ProgramInfo)
			if !ok {
				continue
			}
			for _, pg := range p.Globals {
				if pg.ID == g.ID && (best == nil || p.ID < best.ID) {
					best = p
				}
			}
		}
		g.prog = best
	})
	return g.prog
}

// globalMem returns the storage of g on q's device: one zero-initialised
// buffer per (global, device), or per (global, program, device) for image
// scope. prog is the program whose image holds an image-scope global.
func (q *Queue) globalMem(g *GlobalInfo, prog *ProgramInfo) (*Mem, error) {
	c := q.ctx
	if !g.ImageScope {
		prog = nil
	}
	key := globalKey{g: g, prog: prog, dev: q.dev.index}
	c.decls.mu.Lock()
	defer c.decls.mu.Unlock()
	if m, ok := c.decls.globals[key]; ok {
		return m, nil
	}
	size := max(g.Size, 4)
	m, err := c.NewMem(size)
	if err != nil {
		return nil, fmt.Errorf("storage of device global %s: %w", g.ID, err)
	}
	zero := make([]byte, size)
	// A blocking write creates no event.
	if _, err := q.drv.WriteBuffer(m.drv, true, 0, size, unsafe.Pointer(&zero[0]), nil); err != nil {
		m.Free()
		return nil, fmt.Errorf("zero device global %s on %q: %w", g.ID, q.dev.Name, err)
	}
	if c.decls.globals == nil {
		c.decls.globals = make(map[globalKey]*Mem)
	}
	c.decls.globals[key] = m
	return m, nil
}
