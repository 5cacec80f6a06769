package rt

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/trace"
)

// The launch path. A Kernel holds a prepared launch record (driver.Args):
// every argument's value as last set, and which ones changed since the
// driver last saw them. Setting an argument only writes the record; the
// launch hands the record to the driver, which, where the backend
// implements driver.ArgLauncher (rt/opencl does), sets the changed
// arguments and enqueues in one call. A generated Enqueue reaches it
// through rt/codegen: Acquire, one setter per argument, Submit.

func init() {
	desc.SetLauncher(&desc.Launcher[*Queue, *Kernel, *Mem, *Event, Range]{
		Acquire: acquireSpec,
		Scalar:  (*Kernel).specScalar,
		Bytes:   (*Kernel).specBytes,
		Buffer:  (*Kernel).specBuffer,
		Local:   (*Kernel).specLocal,
		Submit:  submitSpec,
		Launch:  launchSpec,
	})
}

// mark notes that argument i changed.
func (k *Kernel) mark(i int) {
	if s := &k.args.Slots[i]; !s.Changed {
		s.Changed = true
		k.args.Changed++
	}
}

// setScalar records argument i as a value of size bytes (at most 8).
func (k *Kernel) setScalar(i int, size uintptr, bits uint64) {
	s := &k.args.Slots[i]
	if s.Kind != driver.ArgScalar || s.Size != size || s.Bits != bits || size == 0 {
		*s = driver.Arg{Kind: driver.ArgScalar, Size: size, Bits: bits, Changed: s.Changed}
		k.mark(i)
	}
	k.bind(i, nil)
}

// setBytes records argument i as size bytes at p (more than 8).
func (k *Kernel) setBytes(i int, p unsafe.Pointer, size uintptr) {
	s := &k.args.Slots[i]
	v := unsafe.Slice((*byte)(p), size)
	if s.Kind == driver.ArgScalar && s.Size == size && size > 8 {
		if old := k.args.Bytes[s.Offset : s.Offset+size]; string(old) != string(v) {
			copy(old, v)
			k.mark(i)
		}
	} else {
		*s = driver.Arg{Kind: driver.ArgScalar, Size: size, Offset: uintptr(len(k.args.Bytes)), Changed: s.Changed}
		k.args.Bytes = append(k.args.Bytes, v...)
		k.mark(i)
	}
	k.bind(i, nil)
}

// setBuffer records argument i as the memory m: a freed buffer is an
// error wrapping ErrFreed, one of another context an error wrapping
// ErrInvalidArgument.
func (k *Kernel) setBuffer(i int, m *Mem) error {
	drv, err := m.driverBuffer()
	if err == nil {
		err = k.prog.ctx.sameContext("the buffer", m.ctx)
	}
	if err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	s := &k.args.Slots[i]
	if s.Kind != driver.ArgBuffer || k.ids[i] != m.id || s.Size == 0 {
		var h uint64
		if nb, ok := drv.(driver.NativeBuffer); ok {
			h = nb.Handle()
		} else if drv != nil {
			k.foreign = 1 // a backend's buffers are all native or none are
		}
		*s = driver.Arg{Kind: driver.ArgBuffer, Size: unsafe.Sizeof(uintptr(0)), Bits: h, Changed: s.Changed}
		k.ids[i] = m.id
		k.mark(i)
	}
	k.bind(i, m)
	return nil
}

// setLocalArg records argument i as size bytes of local memory.
func (k *Kernel) setLocalArg(i int, size int) error {
	if size <= 0 {
		return fmt.Errorf("set argument %d of kernel %q: %w: local size %d", i, k.name, ErrInvalidArgument, size)
	}
	if max := k.prog.ctx.maxLocalMem(); max > 0 && int64(size) > max {
		return fmt.Errorf("set argument %d of kernel %q: %w: %d bytes of local memory, more than a device of the context has (%d)", i, k.name, ErrInvalidArgument, size, max)
	}
	s := &k.args.Slots[i]
	if s.Kind != driver.ArgLocal || s.Size != uintptr(size) {
		*s = driver.Arg{Kind: driver.ArgLocal, Size: uintptr(size), Changed: s.Changed}
		k.mark(i)
	}
	k.bind(i, nil)
	k.setLocal(i, int64(size))
	return nil
}

// bind notes that argument i is now m (nil for no buffer), and not a
// __local argument unless setLocalArg says so after.
func (k *Kernel) bind(i int, m *Mem) {
	k.setLocal(i, 0)
	if k.bufs == nil {
		if m == nil {
			return
		}
		k.bufs = make([]*Mem, k.nargs)
	}
	if old := k.bufs[i]; old != nil && old.pooled {
		k.pooledArgs--
	}
	if m != nil && m.pooled {
		k.pooledArgs++
	}
	k.bufs[i] = m
}

// flush sets the changed arguments through the driver's kernel one by
// one: the launch path of a backend without driver.ArgLauncher, and what
// the driver must know before it reports work-group info.
func (k *Kernel) flush() error {
	if k.args.Changed == 0 {
		return nil
	}
	for i := range k.args.Slots {
		s := &k.args.Slots[i]
		if !s.Changed {
			continue
		}
		var err error
		switch {
		case s.Kind == driver.ArgBuffer:
			err = k.drv.SetArgBuffer(i, k.bufs[i].drv)
		case s.Kind == driver.ArgLocal:
			err = k.drv.SetArgLocal(i, s.Size)
		case s.Size <= 8:
			err = k.drv.SetArgScalar(i, s.Size, s.Bits)
		default:
			err = k.drv.SetArgBytes(i, s.Size, unsafe.Pointer(&k.args.Bytes[s.Offset]))
		}
		if err != nil {
			return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
		}
		s.Changed = false
		k.args.Changed--
	}
	return nil
}

// enqueue hands the record to the driver and enqueues k over r after dw:
// one call where the queue is a driver.ArgLauncher, else the changed
// arguments one by one and then the launch. It returns a driver event
// only when event is true.
func (k *Kernel) enqueue(q *Queue, r Range, dw []driver.Event, event bool) (driver.Event, error) {
	if q.launcher != nil && k.foreign == 0 {
		return q.launcher.LaunchArgs(k.drv, &k.args, r.ndrange(), dw, event)
	}
	if err := k.flush(); err != nil {
		return nil, err
	}
	if event {
		return q.drv.EnqueueKernel(k.drv, r.ndrange(), dw)
	}
	return nil, q.drv.SubmitKernel(k.drv, r.ndrange(), dw)
}

// SetBuffer sets argument i to the memory m (a Buffer's Mem). A freed
// buffer is an error wrapping ErrFreed.
func (k *Kernel) SetBuffer(i int, m *Mem) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	return k.setBuffer(i, m)
}

// SetLocal sets argument i, a __local pointer, to size bytes of local memory.
func (k *Kernel) SetLocal(i int, size int) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	return k.setLocalArg(i, size)
}

// SetArg sets argument i of k to the value v: a number, or an array or
// struct of numbers laid out as the kernel's parameter type is.
func SetArg[T any](k *Kernel, i int, v T) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if t := reflect.TypeFor[T](); t.Kind() > reflect.Complex128 || t.Kind() == reflect.Uintptr || t.Kind() == reflect.Int || t.Kind() == reflect.Uint {
		// Array, struct, or a type with no fixed device size.
		if err := checkPlain(t); err != nil || t.Kind() <= reflect.Complex128 {
			if err == nil {
				err = fmt.Errorf("%w: %v has no fixed size on the device; use int32 or int64", ErrInvalidArgument, t)
			}
			return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
		}
	}
	if size := unsafe.Sizeof(v); size <= 8 && unsafe.Alignof(v) <= 8 {
		var u uint64
		*(*T)(unsafe.Pointer(&u)) = v
		k.setScalar(i, size, u)
	} else {
		k.setBytes(i, unsafe.Pointer(&v), size)
	}
	return nil
}

// launch is Queue.Launch; skip is as for beginTask.
func (q *Queue) launch(k *Kernel, r Range, wait []*Event, skip int) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	dw, err := q.checkLaunch(k, r, wait, "launch")
	if err != nil {
		return nil, err
	}
	tk := q.beginTask(trace.Kernel, k.name, skip+1, wait)
	ev, err := k.enqueue(q, r, dw, true)
	tk.End()
	if err != nil {
		return nil, fmt.Errorf("launch kernel %q over %v on %q: %w", k.name, r, q.dev.Name, err)
	}
	q.recordArgs(k)
	return q.newTracedEvent(ev, k.name, tk), nil
}

// submit is Queue.Submit; skip is as for beginTask. When tracing reports
// device times it creates an event after all, kept in the pending list.
func (q *Queue) submit(k *Kernel, r Range, wait []*Event, skip int) error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	dw, err := q.checkLaunch(k, r, wait, "submit")
	if err != nil {
		return err
	}
	tk := q.beginTask(trace.Kernel, k.name, skip+1, wait)
	event := q.wantsEvent(&tk)
	ev, err := k.enqueue(q, r, dw, event)
	tk.End()
	if err != nil {
		return fmt.Errorf("submit kernel %q over %v on %q: %w", k.name, r, q.dev.Name, err)
	}
	q.recordArgs(k)
	if event {
		q.addPending(tk, nil, ev)
	}
	return nil
}

// checkLaunch checks a launch of k over r on q after wait before the
// driver sees it, and returns the driver events of wait.
func (q *Queue) checkLaunch(k *Kernel, r Range, wait []*Event, op string) ([]driver.Event, error) {
	if k == nil {
		return nil, nilKernel(op)
	}
	if k.prog.ctx != q.ctx {
		return nil, fmt.Errorf("%s kernel %q: %w", op, k.name, q.ctx.sameContext("the kernel", k.prog.ctx))
	}
	if err := k.checkRange(q, r); err != nil {
		return nil, fmt.Errorf("%s kernel %q: %w", op, k.name, err)
	}
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("%s kernel %q: %w", op, k.name, err)
	}
	return dw, nil
}

// acquireSpec returns the kernel object of the spec d for q's device from
// the context's fast kernel cache (building its program on first use),
// locked, for a generated Enqueue to fill its record.
func acquireSpec(q *Queue, d *desc.Kernel) (*Kernel, error) {
	if q == nil {
		return nil, fmt.Errorf("kernel %s: %w: nil queue", d.ID, ErrInvalidArgument)
	}
	key, err := d.Key()
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	ck, err := q.ctx.pc.Acquire(key, q.dev.index)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	kern := ck.Object()
	if kern.decl != d {
		// First use of this kernel object for the spec: check that the
		// generated code and the image agree.
		if want := d.Params + len(d.Globals); kern.nargs != want {
			ck.Unlock()
			return nil, fmt.Errorf("kernel %s: %w: %q takes %d arguments, the spec %d: run go generate", d.ID, ErrInvalidArgument, d.Name, kern.nargs, want)
		}
		kern.decl, kern.slot = d, ck
	}
	kern.setErr = nil
	return kern, nil
}

// specScalar, specBytes, specBuffer and specLocal set an argument of a
// kernel that acquireSpec returned; the index is the generated code's,
// checked against the kernel's arguments by acquireSpec. An error is kept
// for Submit or Launch to return.
func (k *Kernel) specScalar(i int, size uintptr, bits uint64) { k.setScalar(i, size, bits) }

func (k *Kernel) specBytes(i int, p unsafe.Pointer, size uintptr) { k.setBytes(i, p, size) }

func (k *Kernel) specBuffer(i int, m *Mem) {
	if err := k.setBuffer(i, m); err != nil && k.setErr == nil {
		k.setErr = err
	}
}

func (k *Kernel) specLocal(i int, size int) {
	if err := k.setLocalArg(i, size); err != nil && k.setErr == nil {
		k.setErr = err
	}
}

// submitSpec binds the hidden device-global arguments of k, launches it
// over r after wait without an event and unlocks it. The trace's call site
// is the user's: two frames above this function's caller,
// codegen.Submit, is the caller of the generated Enqueue.
func submitSpec(q *Queue, k *Kernel, r Range, wait []*Event) error {
	if k == nil || k.slot == nil {
		return fmt.Errorf("enqueue: %w: no kernel from Acquire", ErrInvalidArgument)
	}
	defer k.slot.Unlock()
	if err := k.prepare(q); err != nil {
		return err
	}
	return q.submit(k, r, wait, 2)
}

// launchSpec is submitSpec with an event.
func launchSpec(q *Queue, k *Kernel, r Range, wait []*Event) (*Event, error) {
	if k == nil || k.slot == nil {
		return nil, fmt.Errorf("enqueue: %w: no kernel from Acquire", ErrInvalidArgument)
	}
	defer k.slot.Unlock()
	if err := k.prepare(q); err != nil {
		return nil, err
	}
	return q.launch(k, r, wait, 2)
}

// prepare returns the first error of setting the arguments, wrapped, or
// binds the hidden arguments of k.
func (k *Kernel) prepare(q *Queue) error {
	if k.setErr != nil {
		return fmt.Errorf("enqueue %s: %w", k.decl.ID, k.setErr)
	}
	if q == nil {
		return fmt.Errorf("enqueue %s: %w: nil queue", k.decl.ID, ErrInvalidArgument)
	}
	if len(k.decl.Globals) > 0 {
		if err := k.bindHidden(q); err != nil {
			return fmt.Errorf("enqueue %s: %w", k.decl.ID, err)
		}
	}
	return nil
}

// bindHidden sets the hidden arguments to the storage of the kernel's
// device globals on q's device. Called with the kernel locked.
func (k *Kernel) bindHidden(q *Queue) error {
	dev := q.dev.index
	if k.hidden == nil {
		k.hidden = make([][]*Mem, len(q.ctx.devices))
	}
	mems := k.hidden[dev]
	if mems == nil {
		for _, g := range k.decl.Globals {
			m, err := q.globalMem(g, k.decl.Program)
			if err != nil {
				return err
			}
			mems = append(mems, m)
		}
		k.hidden[dev] = mems
	}
	base := k.decl.Params
	for i, m := range mems {
		if err := k.setBuffer(base+i, m); err != nil {
			return err
		}
	}
	return nil
}
