package rt

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/internal/rawapi"
	"github.com/dgen-go/dgen/rt/trace"
)

// Queues and what they run: events, commands, programs and kernels with
// their prepared launch records, the launch path that a generated Enqueue
// takes (one room, from rt/codegen to the backend), ranges, the kernel's
// work-group limits, and the use points of stream-ordered reuse.

// Queue is an in-order command queue on one device. It is safe for
// concurrent use: commands from several goroutines are ordered as they
// reach it.
//
// The fields that a launch reads come first, so that they share few cache
// lines: between two launches the driver's own work evicts them.
type Queue struct {
	ctx      *Context
	dev      *Device
	rec      queueRec           // the graph the queue records into (below)
	tq       *trace.Queue       // trace handle; see "Tracing in rt" (context.go)
	launcher driver.ArgLauncher // drv, where it sets arguments and launches in one call
	drv      driver.Queue
	// specs holds the kernel objects that acquireSpec found last, by a
	// hash of the spec: a loop launches the same few specs again and
	// again, and the cache's lookup chases five pointers.
	specs [8]atomic.Pointer[specHit]

	profiling bool
	lateTimes bool                    // drv is kernel-timed (driver.KernelTimer): its kernels' times may come after them
	timer     driver.KernelTimedQueue // drv, where it is kernel-timed and can time a kernel without its event

	id   int         // the queue's number in its context, from 0
	pend pendingList // traced commands awaiting their device times
	pts  queuePoints // use points, for stream-ordered reuse

	// global is the device global storage that globalMem found last on
	// this queue's device: a host loop reads and writes one global again
	// and again.
	global atomic.Pointer[globalHit]
}

// specHit is the kernel object of a spec on a queue's device, as the
// program cache returned it under the specialization-constant generation
// gen (progcache.Cache.Reacquire).
type specHit struct {
	d   *desc.Kernel
	ck  *progcache.Kernel[*Kernel]
	gen uint64
}

// specSlot returns the entry of q.specs for d.
func (q *Queue) specSlot(d *desc.Kernel) *atomic.Pointer[specHit] {
	return &q.specs[uintptr(unsafe.Pointer(d))*0x9E3779B97F4A7C15>>61]
}

// Context returns the queue's context.
func (q *Queue) Context() *Context {
	if q == nil {
		return nil
	}
	return q.ctx
}

// Device returns the queue's device.
func (q *Queue) Device() *Device {
	if q == nil {
		return nil
	}
	return q.dev
}

// Profiling reports whether the queue records device timestamps.
func (q *Queue) profilingOn() bool { return q != nil && q.profiling }

// Flush submits every enqueued command to the device.
func (q *Queue) Flush() error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	if err := q.drv.Flush(); err != nil {
		return fmt.Errorf("flush queue on %q: %w", q.dev.Name, err)
	}
	return nil
}

// Finish blocks until every enqueued command has completed.
func (q *Queue) Finish() error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	n := q.pts.enq.Load()
	if err := q.drv.Finish(); err != nil {
		return fmt.Errorf("finish queue on %q: %w", q.dev.Name, err)
	}
	q.pts.complete(n)
	q.drainTrace(true)
	return nil
}

// Marker enqueues a command that completes when every event of wait has
// completed, or, with no events, when everything enqueued before it has.
func (q *Queue) Marker(wait ...*Event) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("enqueue marker: %w", err)
	}
	if r := q.rec.Load(); r != nil {
		return nil, r.refuse("enqueue marker", "a marker's event would complete before the graph runs")
	}
	tk := q.beginTask(trace.Marker, "marker", 0, wait)
	ev, err := q.drv.Marker(dw)
	tk.End()
	if err != nil {
		return nil, fmt.Errorf("enqueue marker on %q: %w", q.dev.Name, err)
	}
	return q.newTracedEvent(ev, "marker", tk), nil
}

// driverEvents returns the driver events of wait, skipping nil events, and
// nil (no allocation) when there are none. A released event is an error:
// its backend event is gone; so is an event of another context.
func (q *Queue) driverEvents(wait []*Event) ([]driver.Event, error) {
	if len(wait) == 0 {
		return nil, nil
	}
	dst := make([]driver.Event, 0, len(wait))
	for _, e := range wait {
		if e == nil {
			continue
		}
		e.mu.Lock()
		released := e.released
		e.mu.Unlock()
		if released {
			return nil, fmt.Errorf("wait list: event of %s: %w", e.name, ErrReleased)
		}
		if err := q.ctx.sameContext("the event of "+e.name, e.q.ctx); err != nil {
			return nil, fmt.Errorf("wait list: %w", err)
		}
		dst = append(dst, e.drv)
	}
	return dst, nil
}

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
	desc.SetImageLauncher(&desc.ImageLauncher[*Kernel, Image, Sampler]{
		Image:   (*Kernel).specImage,
		Sampler: (*Kernel).specSampler,
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
	if s.Kind == driver.ArgScalar && uintptr(s.Size) == size && size != 0 {
		// The common case, a scalar again: the slot holds no buffer and
		// no local memory (bind cleared them when it became a scalar).
		if s.Bits != bits {
			s.Bits = bits
			k.mark(i)
		}
		return
	}
	*s = driver.Arg{Kind: driver.ArgScalar, Size: uint32(size), Bits: bits, Changed: s.Changed}
	k.mark(i)
	k.bind(i, nil)
}

// setBytes records argument i as size bytes at p (more than 8).
func (k *Kernel) setBytes(i int, p unsafe.Pointer, size uintptr) {
	s := &k.args.Slots[i]
	v := unsafe.Slice((*byte)(p), size)
	if s.Kind == driver.ArgScalar && uintptr(s.Size) == size && size > 8 {
		if old := k.args.Bytes[s.Bits : s.Bits+uint64(size)]; string(old) != string(v) {
			copy(old, v)
			k.mark(i)
		}
	} else {
		*s = driver.Arg{Kind: driver.ArgScalar, Size: uint32(size), Bits: uint64(len(k.args.Bytes)), Changed: s.Changed}
		k.args.Bytes = append(k.args.Bytes, v...)
		k.mark(i)
	}
	k.bind(i, nil)
}

// setBuffer records argument i as the memory m: a freed buffer is an
// error wrapping ErrFreed, one of another context an error wrapping
// ErrInvalidArgument.
func (k *Kernel) setBuffer(i int, m *Mem) error {
	_, err := m.driverBuffer()
	if err == nil {
		err = k.ctx.sameContext("the buffer", m.ctx)
	}
	if err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	k.recordBuffer(i, m)
	return nil
}

// holds reports whether argument i holds m already, as recordBuffer left
// it, and m may still be used: then setting it again changes nothing. (A
// Mem's driver buffer, and so its id, is the one it was made with, and
// k.bufs keeps m from being collected and its address reused.)
func (k *Kernel) holds(i int, m *Mem) bool {
	return uint(i) < uint(len(k.bufs)) && k.bufs[i] == m && m != nil && m.usable()
}

// recordBuffer records argument i as the memory m (a buffer or an image),
// checked by the caller.
func (k *Kernel) recordBuffer(i int, m *Mem) {
	s := &k.args.Slots[i]
	if s.Kind != driver.ArgBuffer || k.ids[i] != m.id || s.Size == 0 {
		if m.drv != nil && !m.native {
			k.foreign = 1 // a backend's buffers are all native or none are
		}
		*s = driver.Arg{Kind: driver.ArgBuffer, Size: uint32(unsafe.Sizeof(uintptr(0))), Bits: m.handle, Changed: s.Changed}
		k.ids[i] = m.id
		k.mark(i)
	}
	k.bind(i, m)
}

// setLocalArg records argument i as size bytes of local memory.
func (k *Kernel) setLocalArg(i int, size int) error {
	if size <= 0 || checkArgSize(size) != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w: local size %d", i, k.name, ErrInvalidArgument, size)
	}
	if max := k.prog.ctx.maxLocalMem(); max > 0 && int64(size) > max {
		return fmt.Errorf("set argument %d of kernel %q: %w: %d bytes of local memory, more than a device of the context has (%d)", i, k.name, ErrInvalidArgument, size, max)
	}
	s := &k.args.Slots[i]
	if s.Kind != driver.ArgLocal || int(s.Size) != size {
		*s = driver.Arg{Kind: driver.ArgLocal, Size: uint32(size), Changed: s.Changed}
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
		k.held = make([]heldArg, k.nargs)
	}
	// The old argument's memory may have been freed and allocated again
	// by another goroutine since: what bind needs of it, it kept.
	if k.held[i].pooled {
		k.pooledArgs--
	}
	h := heldArg{}
	if m != nil {
		h = heldArg{gen: m.gen.Load(), pooled: m.pooled}
	}
	if h.pooled {
		k.pooledArgs++
	}
	k.bufs[i], k.held[i] = m, h
}

// heldArg is what a kernel keeps of a buffer argument's memory when the
// argument is set.
type heldArg struct {
	gen    uint32 // Mem.gen (checkBufs)
	pooled bool   // Mem.pooled (pooledArgs)
}

// checkBufs returns an error wrapping ErrFreed if the memory of a buffer
// or image argument was freed since the argument was set: a raw launch
// would otherwise run on a released driver buffer, or on a block that the
// allocator has handed to another buffer through the same Mem. (A
// generated Enqueue sets every argument at each launch, and setting checks
// the memory.)
func (k *Kernel) checkBufs(op string) error {
	for i, m := range k.bufs {
		if m != nil && (m.gen.Load() != k.held[i].gen || !m.usable()) {
			return fmt.Errorf("%s kernel %q: argument %d: buffer: %w since the argument was set", op, k.name, i, ErrFreed)
		}
	}
	return nil
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
			err = k.drv.SetArgLocal(i, uintptr(s.Size))
		case s.Kind == driver.ArgSampler:
			err = k.setArgSampler(i)
		case s.Size <= 8:
			err = k.drv.SetArgScalar(i, uintptr(s.Size), s.Bits)
		default:
			err = k.drv.SetArgBytes(i, uintptr(s.Size), unsafe.Pointer(&k.args.Bytes[s.Bits]))
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

// The raw API: rt/raw's functions, installed into rt/internal/rawapi.

func init() {
	rawapi.Set(&rawapi.API[*Context, *Program, *Queue, *Kernel, *Mem, *Event, Range, *Device, Image, Sampler]{
		Build: func(c *Context, name, source, options string) (rawapi.Program[*Kernel], error) {
			return nonNilProgram(c.build(buildRequest{name: name, source: source, options: options}))
		},
		BuildGenerated: func(p *Program, c *Context) (rawapi.Program[*Kernel], error) {
			return nonNilProgram(p.build(c))
		},
		Name: func(k *Kernel) string {
			if k == nil {
				return ""
			}
			return k.name
		},
		Release:  (*Kernel).release,
		CheckArg: (*Kernel).checkArgType,
		Scalar:   (*Kernel).setScalar,
		Bytes:    (*Kernel).setBytes,
		Buffer: func(k *Kernel, i int, m *Mem) error {
			if err := k.checkArg(i); err != nil {
				return err
			}
			return k.setBuffer(i, m)
		},
		Local: func(k *Kernel, i int, size int) error {
			if err := k.checkArg(i); err != nil {
				return err
			}
			return k.setLocalArg(i, size)
		},
		Image:         (*Kernel).setImageArg,
		Sampler:       (*Kernel).setSamplerArg,
		WorkGroupInfo: (*Kernel).workGroupInfo,
		// The trace's call site is the caller of rt/raw's Launch or
		// Submit, one frame above these functions' caller.
		Launch: func(q *Queue, k *Kernel, r Range, wait []*Event) (*Event, error) {
			return q.launch(k, r, wait, 1, false)
		},
		Submit: func(q *Queue, k *Kernel, r Range, wait []*Event) error {
			return q.submit(k, r, wait, 1, false)
		},
	})
}

// nonNilProgram returns p as a rawapi.Program, and a nil interface, not a
// nil *builtProgram in one, with an error.
func nonNilProgram(p *builtProgram, err error) (rawapi.Program[*Kernel], error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkArgType checks that argument i of k may be set to a value of type
// t: a number of fixed size, or an array or struct of them.
func (k *Kernel) checkArgType(i int, t reflect.Type) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if t.Kind() > reflect.Complex128 || t.Kind() == reflect.Uintptr || t.Kind() == reflect.Int || t.Kind() == reflect.Uint {
		// Array, struct, or a type with no fixed device size.
		err := checkPlain(t)
		if err == nil && t.Kind() <= reflect.Complex128 {
			err = fmt.Errorf("%w: %v has no fixed size on the device; use int32 or int64", ErrInvalidArgument, t)
		}
		if err == nil {
			err = checkArgSize(t.Size())
		}
		if err != nil {
			return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
		}
	}
	return nil
}

// launch enqueues k over r after wait; skip is as for beginTask. With spec set, k is
// a spec's kernel object, whose hidden arguments it binds first.
func (q *Queue) launch(k *Kernel, r Range, wait []*Event, skip int, spec bool) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	if spec {
		// Inside enter: Close must not free the globals' storage while
		// prepare binds it.
		if err := k.prepare(q); err != nil {
			return nil, err
		}
	}
	dw, err := q.checkLaunch(k, r, wait, "launch")
	if err == nil && !spec {
		err = k.checkBufs("launch")
	}
	if err != nil {
		return nil, err
	}
	if rec := q.rec.Load(); rec != nil {
		return nil, fmt.Errorf("launch kernel %q: %w", k.name, rec.recordKernel(q, k, r, dw, true, skip+1))
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

// submit is launch without an event; skip and spec are as for launch. When tracing
// reports device times it creates an event after all, kept in the pending
// list.
func (q *Queue) submit(k *Kernel, r Range, wait []*Event, skip int, spec bool) error {
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	if spec {
		if err := k.prepare(q); err != nil {
			return err
		}
	}
	dw, err := q.checkLaunch(k, r, wait, "submit")
	if err == nil && !spec {
		err = k.checkBufs("submit")
	}
	if err != nil {
		return err
	}
	if rec := q.rec.Load(); rec != nil {
		if err := rec.recordKernel(q, k, r, dw, false, skip+1); err != nil {
			return fmt.Errorf("submit kernel %q: %w", k.name, err)
		}
		return nil
	}
	tk := q.beginTask(trace.Kernel, k.name, skip+1, wait)
	event := q.wantsEvent(tk)
	var ev driver.Event
	if event && q.timer != nil && k.foreign == 0 {
		ev, err = q.timer.LaunchArgsTimed(k.drv, &k.args, r.ndrange(), dw) // the event is for the times only
	} else {
		ev, err = k.enqueue(q, r, dw, event)
	}
	if event {
		tk.End()
	} else {
		tk.EndRelease()
	}
	if err != nil {
		return fmt.Errorf("submit kernel %q over %v on %q: %w", k.name, r, q.dev.Name, err)
	}
	q.recordArgs(k)
	if event {
		q.addPending(tk, nil, ev)
		tk.Release()
	}
	return nil
}

// checkLaunch checks a launch of k over r on q after wait before the
// driver sees it, and returns the driver events of wait.
func (q *Queue) checkLaunch(k *Kernel, r Range, wait []*Event, op string) ([]driver.Event, error) {
	if k == nil {
		return nil, nilKernel(op)
	}
	if k.ctx != q.ctx {
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
	slot := q.specSlot(d)
	if h := slot.Load(); h != nil && h.d == d && q.ctx.pc.Reacquire(h.ck, h.gen) {
		if kern := h.ck.Object(); kern.decl == d { // else another spec of the same kernel took it since
			kern.setErr = nil
			return kern, nil
		}
		h.ck.Unlock()
	}
	key, err := d.Key()
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", d.ID, err)
	}
	if len(d.Extensions) > 0 {
		if err := checkExtensions(d, q.dev); err != nil {
			return nil, err
		}
	}
	gen := q.ctx.pc.Gen()
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
	slot.Store(&specHit{d: d, ck: ck, gen: gen})
	kern.setErr = nil
	return kern, nil
}

// checkExtensions returns an error wrapping ErrNoKernel, naming the
// kernel, the device and the extension, when dev lacks an extension the
// kernel d needs: its definition is behind "#if defined(ext)", so the
// device's compiler leaves it out.
func checkExtensions(d *desc.Kernel, dev *Device) error {
	for _, need := range d.Extensions {
		if !slices.ContainsFunc(strings.Split(need, "|"), func(e string) bool { return slices.Contains(dev.Extensions, e) }) {
			what := "extension " + need
			if strings.Contains(need, "|") {
				what = "any of the extensions " + strings.ReplaceAll(need, "|", ", ")
			}
			return fmt.Errorf("kernel %s (%s): device %s lacks %s, under which the kernel is defined: %w", d.ID, d.Name, dev.Name, what, ErrNoKernel)
		}
	}
	return nil
}

// specScalar, specBytes, specBuffer and specLocal set an argument of a
// kernel that acquireSpec returned; the index is the generated code's,
// checked against the kernel's arguments by acquireSpec. An error is kept
// for Submit or Launch to return.
func (k *Kernel) specScalar(i int, size uintptr, bits uint64) { k.setScalar(i, size, bits) }

func (k *Kernel) specBytes(i int, p unsafe.Pointer, size uintptr) {
	if err := checkArgSize(size); err != nil {
		if k.setErr == nil {
			k.setErr = fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
		}
		return
	}
	k.setBytes(i, p, size)
}

// maxArgBytes is the size of the largest kernel argument value
// (driver.Arg.Size), far above what any device takes
// (CL_DEVICE_MAX_PARAMETER_SIZE is at least 1024 bytes, NVIDIA's 4352).
const maxArgBytes = 1<<31 - 1

// checkArgSize returns an error wrapping ErrInvalidArgument for a value of
// more than maxArgBytes bytes.
func checkArgSize[N int | uintptr](size N) error {
	if uint64(size) > maxArgBytes {
		return fmt.Errorf("%w: %d bytes, more than a kernel argument can be", ErrInvalidArgument, size)
	}
	return nil
}

func (k *Kernel) specBuffer(i int, m *Mem) {
	if k.holds(i, m) {
		return
	}
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
	return q.submit(k, r, wait, 2, true)
}

// launchSpec is submitSpec with an event.
func launchSpec(q *Queue, k *Kernel, r Range, wait []*Event) (*Event, error) {
	if k == nil || k.slot == nil {
		return nil, fmt.Errorf("enqueue: %w: no kernel from Acquire", ErrInvalidArgument)
	}
	defer k.slot.Unlock()
	return q.launch(k, r, wait, 2, true)
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

// beginTask is the trace point of every enqueued command: it returns the
// command's task (nil when tracing is off, after one atomic load) and emits
// its edges: the in-order edge and one per event of wait. skip is the
// number of rt frames between beginTask's caller and the user's code (see
// the comment at the top of this file). The caller releases the task when
// it is done with it, unless an Event keeps it (newTracedEvent).
func (q *Queue) beginTask(kind trace.CmdKind, name string, skip int, wait []*Event) *trace.Task {
	// Begin's skip 0 is beginTask; +1 is beginTask's caller.
	tk := q.tq.Begin(kind, name, skip+2)
	if tk != nil {
		for _, w := range wait {
			if w != nil {
				tk.DependsOn(w.task)
			}
		}
	}
	return tk
}

// wantsEvent reports whether tk is a sampled task on a queue that reports
// device times (its context opened with device-time sampling, so that its
// clock is aligned), so that its command needs an event.
func (q *Queue) wantsEvent(tk *trace.Task) bool {
	return q.ctx.devTimes && q.profiling && tk.Sampled()
}

// addPending keeps a copy of tk with its command until its device times
// are known.
func (q *Queue) addPending(tk *trace.Task, ev *Event, drv driver.Event) {
	p := &q.pend
	p.mu.Lock()
	p.tasks = append(p.tasks, pendingTask{task: *tk, ev: ev, drv: drv})
	grow := len(p.tasks) >= max(p.next, pendingDrainAt)
	p.mu.Unlock()
	if grow {
		// Waiting for the newest command makes a profiling queue's times
		// all readable at once; a kernel-timed queue reads the times that
		// have come (waiting would have its backend fetch the rest early).
		q.drainTrace(!q.lateTimes)
	}
}

// sameContext checks that an object of context of, named what, may be
// used with context c: an error wrapping ErrInvalidArgument that names
// both contexts' devices if not. OpenCL leaves the use of one context's
// objects in another undefined.
func (c *Context) sameContext(what string, of *Context) error {
	if of == c {
		return nil
	}
	return fmt.Errorf("%w: %s belongs to the context on %s, not to this one on %s", ErrInvalidArgument, what, of.deviceLabel(), c.deviceLabel())
}

// Use recording for stream-ordered reuse (see the rt/alloc package
// documentation).
//
// Every queue counts the commands that use allocator memory: a command takes
// its point, the next count, after it has been enqueued, and records it in
// the useLog of every allocator buffer it uses. A blocking transfer or Finish
// reads the count before it starts and, once it returns, marks every point up
// to that count complete: the queue is in order, and a command whose point
// was taken before the count was read was enqueued before the transfer. When
// the buffer is freed, its log goes to the allocator as the block's last
// uses; an allocation on another queue that reuses the block waits for the
// ones not yet known complete.
//
// A context with one queue keeps no log (Context.multiQueue is false): every
// reuse is on the queue of every use, so the allocator's hit-and-free path
// costs no use recording. Creating the second queue finishes the first,
// which completes every use that went unrecorded.

// queuePoints are a queue's use counters.
type queuePoints struct {
	enq  atomic.Uint64 // points taken: commands enqueued that use allocator memory
	done atomic.Uint64 // every point up to done has completed
}

// point returns the point of a command that has just been enqueued.
func (p *queuePoints) point() uint64 { return p.enq.Add(1) }

// complete marks every point up to n complete.
func (p *queuePoints) complete(n uint64) { storeMax(&p.done, n) }

// storeMax sets v to n if n is larger.
func storeMax(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// useLog records where a buffer of the allocator has been used: the latest
// point on the first queue that used it, without a lock, and the latest
// point on each other queue, under a mutex, in more.
type useLog struct {
	q    atomic.Pointer[Queue]
	pt   atomic.Uint64
	more atomic.Pointer[moreUses]
}

// moreUses are a buffer's uses on queues other than its first.
type moreUses struct {
	mu   sync.Mutex
	uses []alloc.Use
}

// record notes a use of the buffer on q at point p.
func (l *useLog) record(q *Queue, p uint64) {
	first := l.q.Load()
	if first == nil && !l.q.CompareAndSwap(nil, q) {
		first = l.q.Load() // another goroutine's queue came first
	}
	if first == nil || first == q {
		storeMax(&l.pt, p)
		return
	}
	m := l.more.Load()
	if m == nil {
		l.more.CompareAndSwap(nil, &moreUses{})
		m = l.more.Load()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.uses {
		if m.uses[i].Queue == alloc.Queue(q) {
			m.uses[i].Point = max(m.uses[i].Point, p)
			return
		}
	}
	m.uses = append(m.uses, alloc.Use{Queue: q, Point: p})
}

// appendTo appends the recorded uses to dst.
func (l *useLog) appendTo(dst []alloc.Use) []alloc.Use {
	q := l.q.Load()
	if q == nil {
		return dst
	}
	dst = append(dst, alloc.Use{Queue: q, Point: l.pt.Load()})
	if m := l.more.Load(); m != nil {
		m.mu.Lock()
		dst = append(dst, m.uses...)
		m.mu.Unlock()
	}
	return dst
}

// reset forgets every use: the Mem is handed out again.
func (l *useLog) reset() {
	l.q.Store(nil)
	l.pt.Store(0)
	l.more.Store(nil)
}

// used records a use of m, if it is allocator memory, by the command of
// point p on q; the use of a view is a use of its parent.
func (m *Mem) used(q *Queue, p uint64) {
	if m != nil && m.parent != nil {
		m = m.parent
	}
	if m != nil && m.pooled {
		m.uses.record(q, p)
	}
}

// record records the use of ms by the command just enqueued on q. A
// context with one queue records nothing: reuse on the queue that used a
// block is free, and NewQueue drains the first queue before a second one
// can reuse anything.
func (q *Queue) record(ms ...*Mem) {
	if !q.ctx.multiQueue.Load() {
		return
	}
	p := q.pts.point()
	for _, m := range ms {
		m.used(q, p)
	}
}

// recordArgs records the use of k's buffer arguments by the command just
// enqueued on q.
func (q *Queue) recordArgs(k *Kernel) {
	if k.pooledArgs == 0 || !q.ctx.multiQueue.Load() {
		return
	}
	p := q.pts.point()
	for _, m := range k.bufs {
		m.used(q, p)
	}
}

// Completed implements alloc.Device: whether every command of u's queue up
// to u's point is known to have completed.
func (d *devAlloc) Completed(u alloc.Use) bool {
	q := u.Queue.(*Queue)
	return q.pts.done.Load() >= u.Point
}

// Order implements alloc.Device. For each use it enqueues a marker on the
// use's queue, which completes when every command enqueued there so far has
// (the use's point among them); then a marker on q that waits for those
// markers. q is in order, so the commands enqueued on it afterwards start
// only when that marker has completed. Nothing blocks the host, except for
// the nil queue (the host), for which Order waits for the markers.
func (d *devAlloc) Order(q alloc.Queue, uses []alloc.Use) (err error) {
	evs := make([]driver.Event, 0, len(uses))
	defer func() {
		for _, ev := range evs {
			ev.Release()
		}
	}()
	for _, u := range uses {
		from := u.Queue.(*Queue)
		ev, err := from.drv.Marker(nil)
		if err != nil {
			return fmt.Errorf("order reuse after use on queue %d of %q: marker: %w", from.id, from.dev.Name, err)
		}
		evs = append(evs, ev)
		// OpenCL guarantees a wait on another queue's event only once
		// that queue has been flushed.
		if err := from.drv.Flush(); err != nil {
			return fmt.Errorf("order reuse after use on queue %d of %q: flush: %w", from.id, from.dev.Name, err)
		}
	}
	to, _ := q.(*Queue)
	if to == nil {
		for i, ev := range evs {
			if err := ev.Wait(); err != nil {
				from := uses[i].Queue.(*Queue)
				return fmt.Errorf("wait for use on queue %d of %q: %w", from.id, from.dev.Name, err)
			}
		}
		return nil
	}
	ev, err := to.drv.Marker(evs)
	if err != nil {
		return fmt.Errorf("order reuse on queue %d of %q: marker: %w", to.id, to.dev.Name, err)
	}
	ev.Release()
	return nil
}

// kernelLimits are what a Kernel knows of its work-group limits: the
// bytes of its __local arguments as set, and per device the work-group
// info, asked of the driver once.
type kernelLimits struct {
	locals     []int64 // by argument index: bytes of a __local argument, else 0
	localBytes int64   // their sum
	wg         []atomic.Pointer[wgInfo]
}

// wgInfo is a kernel's work-group info on one device, with the local memory
// of its own __local variables (without arguments).
type wgInfo struct {
	driver.KernelWorkGroupInfo
	static int64
}

// setLocal notes that argument i is size bytes of local memory (0: not a
// __local argument).
func (k *Kernel) setLocal(i int, size int64) {
	if k.lim.locals == nil {
		if size == 0 {
			return
		}
		k.lim.locals = make([]int64, k.nargs)
	}
	k.lim.localBytes += size - k.lim.locals[i]
	k.lim.locals[i] = size
}

// workGroupInfo returns the kernel's work-group limits on d, one of its
// context's devices, asked of the driver once per device.
func (k *Kernel) workGroupInfo(d *Device) (driver.KernelWorkGroupInfo, error) {
	if k == nil {
		return driver.KernelWorkGroupInfo{}, nilKernel("work-group info")
	}
	info, err := k.workGroup(d)
	if err != nil {
		return driver.KernelWorkGroupInfo{}, err
	}
	return info.KernelWorkGroupInfo, nil
}

// workGroup returns the kernel's cached work-group info on d.
func (k *Kernel) workGroup(d *Device) (*wgInfo, error) {
	c := k.prog.ctx
	if d == nil || d.index >= len(c.devices) || c.devices[d.index] != d {
		return nil, fmt.Errorf("work-group info of kernel %q: %w: the device is not one of its context's (%s)", k.name, ErrInvalidArgument, c.deviceLabel())
	}
	if k.lim.wg == nil {
		// Set at creation; a Kernel made otherwise has no cache.
		return k.askWorkGroup(d)
	}
	if info := k.lim.wg[d.index].Load(); info != nil {
		return info, nil
	}
	info, err := k.askWorkGroup(d)
	if err != nil {
		return nil, err
	}
	k.lim.wg[d.index].Store(info)
	return info, nil
}

// askWorkGroup asks the driver for the kernel's work-group info on d.
func (k *Kernel) askWorkGroup(d *Device) (*wgInfo, error) {
	if err := k.prog.ctx.enter(); err != nil {
		return nil, fmt.Errorf("work-group info of kernel %q: %w", k.name, err)
	}
	defer k.prog.ctx.exit()
	if k.released.Load() {
		return nil, fmt.Errorf("work-group info of kernel %q: %w", k.name, ErrClosed)
	}
	// The driver must know the __local arguments set so far.
	if err := k.flush(); err != nil {
		return nil, fmt.Errorf("work-group info: %w", err)
	}
	info, err := k.drv.WorkGroupInfo(d.Handle)
	if err != nil {
		return nil, fmt.Errorf("work-group info of kernel %q on %q: %w", k.name, d.Name, err)
	}
	// The driver counts the __local arguments set so far; the rest is the
	// kernel's own.
	return &wgInfo{KernelWorkGroupInfo: info, static: max(info.LocalMemSize-k.lim.localBytes, 0)}, nil
}

// checkRange checks r, then the kernel's limits on q's device. A launch
// like the last one that passed (the same range, device and local memory
// of arguments) passes again without a check.
func (k *Kernel) checkRange(q *Queue, r Range) error {
	ok := &k.passed
	if ok.dev == q.dev && ok.r.same(&r) && ok.localBytes == k.lim.localBytes {
		return nil
	}
	if err := r.check(); err != nil {
		return err
	}
	if err := k.checkLaunch(q, r); err != nil {
		return err
	}
	*ok = passedLaunch{r: r, dev: q.dev, localBytes: k.lim.localBytes}
	return nil
}

// passedLaunch is the last launch of a kernel that checkRange passed.
type passedLaunch struct {
	r          Range
	dev        *Device // nil: none yet
	localBytes int64
}

// checkLaunch checks r and the kernel's local memory against the limits of
// q's device, before the driver sees them: a work-group larger than the
// kernel allows, or more local memory than the device has, is an error
// wrapping ErrInvalidArgument that gives the limits.
func (k *Kernel) checkLaunch(q *Queue, r Range) error {
	if k.lim.localBytes == 0 && !r.hasLocal() {
		return nil
	}
	d := q.dev
	info, err := k.workGroup(d)
	if err != nil {
		return err
	}
	if r.hasLocal() {
		n := 1
		for i := range r.Dims {
			n *= r.Local[i]
		}
		if n > info.WorkGroupSize {
			return fmt.Errorf("%w: a work-group of %d work-items (range %v) is more than kernel %q allows on %q: %d (the device allows %d)",
				ErrInvalidArgument, n, r, k.name, d.Name, info.WorkGroupSize, d.MaxWorkGroupSize)
		}
	}
	if need := info.static + k.lim.localBytes; d.LocalMemSize > 0 && need > d.LocalMemSize {
		return fmt.Errorf("%w: kernel %q needs %d bytes of local memory (%d in __local arguments, %d of its own), %q has %d",
			ErrInvalidArgument, k.name, need, k.lim.localBytes, info.static, d.Name, d.LocalMemSize)
	}
	return nil
}

// maxLocalMem returns the most local memory a device of c has, or 0 if no
// device reports it.
func (c *Context) maxLocalMem() int64 {
	var n int64
	for _, d := range c.devices {
		n = max(n, d.LocalMemSize)
	}
	return n
}

// Range is an NDRange: the global size in up to three dimensions and,
// optionally, the local (work-group) size. Dimension 0 is the one that
// get_global_id(0) indexes, the fastest varying.
type Range struct {
	Dims   int
	Global [3]int
	Local  [3]int // all zero: the device chooses, unless set by WithLocal
	// nlocal is 1 + the number of sizes WithLocal was given, 0 if it was
	// not called: a range that asked for a work-group size must give a
	// positive one in every dimension, whatever the sizes are.
	nlocal int8
}

// Range1 returns a one-dimensional range of n work-items.
func Range1(n int) Range { return Range{Dims: 1, Global: [3]int{n, 1, 1}} }

// Range2 returns a two-dimensional range, d0 work-items in dimension 0 and
// d1 in dimension 1.
func Range2(d0, d1 int) Range { return Range{Dims: 2, Global: [3]int{d0, d1, 1}} }

// Range3 returns a three-dimensional range.
func Range3(d0, d1, d2 int) Range { return Range{Dims: 3, Global: [3]int{d0, d1, d2}} }

// WithLocal returns r with the work-group size set; give one positive size
// per dimension of r. A zero size is an error at launch, not "the device
// chooses": leave WithLocal out for that.
func (r Range) WithLocal(sizes ...int) Range {
	r.Local = [3]int{}
	copy(r.Local[:], sizes)
	r.nlocal = int8(min(len(sizes), 100) + 1)
	return r
}

// same reports whether r and o are equal: r == o, field by field rather
// than through the runtime's memory comparison (a launch makes it).
func (r *Range) same(o *Range) bool {
	return r.Global == o.Global && r.Local == o.Local && r.Dims == o.Dims && r.nlocal == o.nlocal
}

// hasLocal reports whether r sets a work-group size: through WithLocal,
// or in Local.
func (r Range) hasLocal() bool { return r.nlocal > 0 || r.Local != [3]int{} }

// ndrange returns r as the driver takes it.
func (r Range) ndrange() driver.NDRange {
	return driver.NDRange{Dims: r.Dims, Global: r.Global, Local: r.Local}
}

func (r Range) check() error {
	if r.Dims < 1 || r.Dims > 3 {
		return fmt.Errorf("range %v: %w: %d dimensions", r, ErrInvalidArgument, r.Dims)
	}
	if n := int(r.nlocal) - 1; n >= 0 && n != r.Dims {
		return fmt.Errorf("range %v: %w: %d-D range given %d local size%s", r, ErrInvalidArgument, r.Dims, n, plural(n))
	}
	local := r.hasLocal()
	for i := range 3 {
		if i >= r.Dims {
			if local && r.Local[i] != 0 {
				return fmt.Errorf("range %v: %w: local size %d in dimension %d of a %d-D range", r, ErrInvalidArgument, r.Local[i], i, r.Dims)
			}
			continue
		}
		if r.Global[i] <= 0 {
			return fmt.Errorf("range %v: %w: global size %d in dimension %d", r, ErrInvalidArgument, r.Global[i], i)
		}
		if !local {
			continue
		}
		if r.Local[i] <= 0 {
			return fmt.Errorf("range %v: %w: local size %d in dimension %d: give a positive size in every dimension, or none", r, ErrInvalidArgument, r.Local[i], i)
		}
		if r.Global[i]%r.Local[i] != 0 {
			return fmt.Errorf("range %v: %w: local size %d does not divide global size %d in dimension %d", r, ErrInvalidArgument, r.Local[i], r.Global[i], i)
		}
	}
	return nil
}

// String returns the global size, and the local size after a slash where
// one is set: "[64 64]/[16 16]".
func (r Range) String() string {
	d := min(max(r.Dims, 0), 3)
	s := fmt.Sprint(r.Global[:d])
	if r.nlocal > 0 {
		s += "/" + fmt.Sprint(r.Local[:min(int(r.nlocal)-1, 3)])
	} else if r.hasLocal() {
		s += "/" + fmt.Sprint(r.Local[:d])
	}
	return s
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Event is the completion status of one enqueued command. Pass it in a wait
// list to order commands, or Wait for it. The backend event is released
// when the Event becomes unreachable, or earlier by Release.
type Event struct {
	q    *Queue
	name string
	task *trace.Task // the command's trace task, never released; nil when untraced

	mu       sync.Mutex
	drv      driver.Event
	cleanup  runtime.Cleanup
	released bool
	pending  bool // in its queue's trace list: the list releases drv
}

type eventHandle struct{ drv driver.Event }

func newEvent(q *Queue, drv driver.Event, name string) *Event {
	e := &Event{q: q, drv: drv, name: name}
	e.cleanup = runtime.AddCleanup(e, func(h eventHandle) { h.drv.Release() }, eventHandle{drv})
	return e
}

// nilEvent is the error of an operation on a nil *Event.
func nilEvent(op string) error { return fmt.Errorf("%s: %w: nil event", op, ErrInvalidArgument) }

// Wait blocks until the command has completed and returns its error, if
// it failed.
func (e *Event) Wait() error {
	if e == nil {
		return nil
	}
	if err := e.wait(); err != nil {
		return err
	}
	if e.task != nil && e.q.ctx.devTimes {
		e.q.drainTrace(false)
	}
	return nil
}

func (e *Event) wait() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return fmt.Errorf("wait for %s: %w", e.name, ErrReleased)
	}
	if err := e.drv.Wait(); err != nil {
		return fmt.Errorf("wait for %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return nil
}

// Status returns the command's execution status.
func (e *Event) status() (driver.EventStatus, error) {
	if e == nil {
		return 0, nilEvent("status")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return 0, fmt.Errorf("status of %s: %w", e.name, ErrReleased)
	}
	s, err := e.drv.Status()
	if err != nil {
		return 0, fmt.Errorf("status of %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return s, nil
}

// Timing returns the command's device timestamps. The queue must profile
// (Config.Profiling); Timing waits for the command first.
func (e *Event) Timing() (driver.Timing, error) {
	if e == nil {
		return driver.Timing{}, nilEvent("timing")
	}
	if !e.q.profiling {
		return driver.Timing{}, fmt.Errorf("timing of %s: %w: queue on %q does not profile", e.name, ErrInvalidArgument, e.q.dev.Name)
	}
	if err := e.Wait(); err != nil {
		return driver.Timing{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t, err := e.drv.Profile()
	if err != nil {
		return driver.Timing{}, fmt.Errorf("timing of %s on %q: %w", e.name, e.q.dev.Name, err)
	}
	return t, nil
}

// Release releases the backend event now rather than when the Event
// becomes unreachable. The command itself is not affected. Using the Event
// afterwards (Wait, Status, Timing, a wait list) is an error wrapping
// ErrReleased; releasing it again does nothing.
func (e *Event) Release() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return nil
	}
	e.released = true
	e.cleanup.Stop()
	if e.pending {
		return nil // the trace's pending list releases it once it has its times
	}
	if err := e.drv.Release(); err != nil {
		return fmt.Errorf("release event of %s: %w", e.name, err)
	}
	return nil
}

// builtProgram is a program built for every device of its context: the
// executable form of a device image.
type builtProgram struct {
	ctx      *Context
	drv      driver.Program
	name     string
	released atomic.Bool
}

// buildRequest is what the build seam receives: source to compile, or
// binaries to load.
type buildRequest struct {
	name     string
	source   string
	binaries [][]byte
	options  string
}

// loadProgram creates a program from binaries, one per device of the
// context in order, as builtProgram.Binaries returned them.
func (c *Context) loadProgram(name string, binaries [][]byte, options string) (*builtProgram, error) {
	if c == nil {
		return nil, fmt.Errorf("load program %q: %w: nil context", name, ErrInvalidArgument)
	}
	if len(binaries) != len(c.devices) {
		return nil, fmt.Errorf("load program %q: %w: %d binaries for %d devices", name, ErrInvalidArgument, len(binaries), len(c.devices))
	}
	return c.build(buildRequest{name: name, binaries: binaries, options: options})
}

// buildDirect makes a program through the backend, bypassing the cache.
func (c *Context) buildDirect(req buildRequest) (*builtProgram, error) {
	if req.binaries != nil { // a program from source had its options checked by ProgramFor
		if err := checkOptions(req.options, optionsFromAPI); err != nil {
			return nil, fmt.Errorf("load program %q: %w", req.name, err)
		}
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	var (
		drv driver.Program
		err error
		op  = "build"
		t0  = c.traceNow()
	)
	if req.binaries != nil {
		op = "load"
		drv, err = c.drv.LoadProgram(req.binaries, req.options)
	} else {
		drv, err = c.drv.BuildProgram(req.source, req.options)
	}
	if err != nil {
		return nil, fmt.Errorf("%s program %q for %s: %w", op, req.name, c.deviceLabel(), err)
	}
	if req.binaries == nil && t0 != 0 {
		c.traceCache(0, trace.Cache{Op: trace.Build, Program: req.name, Duration: c.tr.Now() - t0})
	}
	return &builtProgram{ctx: c, drv: drv, name: req.name}, nil
}

func (c *Context) deviceLabel() string {
	if len(c.devices) == 1 {
		return fmt.Sprintf("device %q", c.devices[0].Name)
	}
	var infos []driver.DeviceInfo
	for _, d := range c.devices {
		infos = append(infos, d.DeviceInfo)
	}
	return "devices " + labels(infos)
}

// Name returns the program's name.
func (p *builtProgram) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// nilProgram is the error of a method called on a nil *builtProgram.
func nilProgram(op string) error {
	return fmt.Errorf("%s: %w: nil program", op, ErrInvalidArgument)
}

// binaries returns the built program for each device of the context.
func (p *builtProgram) binaries() ([][]byte, error) {
	if p == nil {
		return nil, nilProgram("binaries of program")
	}
	if p.released.Load() {
		return nil, fmt.Errorf("binaries of program %q: %w", p.name, ErrClosed)
	}
	b, err := p.drv.Binaries()
	if err != nil {
		return nil, fmt.Errorf("binaries of program %q: %w", p.name, err)
	}
	return b, nil
}

// kernelNames lists the kernels that the program defines.
func (p *builtProgram) kernelNames() ([]string, error) {
	if p == nil {
		return nil, nilProgram("kernels of program")
	}
	if p.released.Load() {
		return nil, fmt.Errorf("kernels of program %q: %w", p.name, ErrClosed)
	}
	names, err := p.drv.KernelNames()
	if err != nil {
		return nil, fmt.Errorf("kernels of program %q: %w", p.name, err)
	}
	return names, nil
}

// Release releases the program. Kernels made from it stay usable.
func (p *builtProgram) Release() error {
	if p == nil {
		return nilProgram("release program")
	}
	if p.released.Swap(true) {
		return nil
	}
	if err := p.drv.Release(); err != nil {
		return fmt.Errorf("release program %q: %w", p.name, err)
	}
	return nil
}

// Kernel is a kernel object of a built program with its prepared launch
// record: the argument values as last set. Code generated by dgen holds
// one between rt/codegen's Acquire and Submit; rt/raw's Kernel, the same
// object, sets its arguments by hand. Applications do not use it
// directly.
//
// The fields that a launch reads come first, so that they share few cache
// lines: between two launches the driver's own work evicts them.
type Kernel struct {
	// args is the prepared launch record (see "The launch path"): every
	// argument's value as last set, and which ones changed since the
	// driver last saw them. It is the first field: rt/codegen's SetScalar
	// updates a scalar argument in place through a pointer to the Kernel
	// (TestKernelRecordFirst holds it there).
	args driver.Args
	ctx  *Context // prog's
	drv  driver.Kernel

	// For kernels of registered specs: slot is the cache's kernel, whose
	// lock Acquire takes and Launch releases; decl is the spec it serves,
	// and hidden holds, per device index, the storage of the device
	// globals bound as hidden arguments.
	decl   *desc.Kernel
	slot   *progcache.Kernel[*Kernel]
	setErr error // the first error of setting an argument since Acquire

	// The rest of the launch record: for buffer arguments their memory,
	// whose use launches record.
	bufs       []*Mem
	held       []heldArg // by argument: what bind kept of a buffer's memory
	ids        []uint64  // by argument: a buffer's Mem.id (a driver may reuse a released handle)
	pooledArgs int32     // buffer arguments that are allocator memory
	foreign    int32     // buffer arguments whose driver buffer has no native handle
	passed     passedLaunch
	lim        kernelLimits // local memory and work-group limits
	hidden     [][]*Mem

	prog     *builtProgram
	name     string
	nargs    int
	released atomic.Bool
	samplers []*samplerObject // by argument: the context's sampler of a sampler argument (memory.go)
}

// Kernel creates the kernel called name. A name that the program does not
// define is an error wrapping ErrNoKernel.
func (p *builtProgram) Kernel(name string) (*Kernel, error) {
	if p == nil {
		return nil, nilProgram(fmt.Sprintf("create kernel %q", name))
	}
	if p.released.Load() {
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, ErrClosed)
	}
	if err := p.ctx.enter(); err != nil {
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	defer p.ctx.exit()
	drv, err := p.drv.NewKernel(name)
	if err != nil {
		if errors.Is(err, ErrNoKernel) {
			if names, nerr := p.drv.KernelNames(); nerr == nil {
				err = fmt.Errorf("%w (it defines %v)", err, names)
			}
		}
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	n, err := drv.NumArgs()
	if err != nil {
		drv.Release()
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	k := &Kernel{prog: p, ctx: p.ctx, drv: drv, name: name, nargs: n}
	k.args.Slots = make([]driver.Arg, n)
	k.ids = make([]uint64, n)
	k.lim.wg = make([]atomic.Pointer[wgInfo], len(p.ctx.devices))
	return k, nil
}

// numArgs returns the number of arguments the kernel takes.
func (k *Kernel) numArgs() int {
	if k == nil {
		return 0
	}
	return k.nargs
}

// nilKernel is the error of an operation on a nil *Kernel.
func nilKernel(op string) error { return fmt.Errorf("%s: %w: nil kernel", op, ErrInvalidArgument) }

// release releases the kernel object.
func (k *Kernel) release() error {
	if k == nil {
		return nilKernel("release kernel")
	}
	if k.released.Swap(true) {
		return nil
	}
	if err := k.drv.Release(); err != nil {
		return fmt.Errorf("release kernel %q: %w", k.name, err)
	}
	return nil
}

func (k *Kernel) checkArg(i int) error {
	if k == nil {
		return nilKernel(fmt.Sprintf("set argument %d", i))
	}
	if k.released.Load() {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, ErrClosed)
	}
	if i < 0 || i >= k.nargs {
		return fmt.Errorf("set argument %d of kernel %q: %w: it takes %d arguments", i, k.name, ErrOutOfRange, k.nargs)
	}
	return nil
}

// Command graphs: record once, replay many, as CUDA Graphs, SYCL's
// command_graph and OpenCL's cl_khr_command_buffer do. The four agree on
// the life of a graph, and so does Graph:
//
//   - record: Queue.Record puts a queue in recording mode while a function
//     runs; the commands it enqueues on the queue (generated launches,
//     Fill, CopyTo, writes of buffers and device globals) are recorded,
//     not executed.
//   - finalize: when that function returns, Record ends the recording and
//     prepares the commands for replay: each kernel launch gets a kernel
//     object of its own, with its arguments set once; the backend turns
//     the list into what replays fastest (an OpenCL command buffer, a CUDA
//     graph, a loop in C).
//   - launch: Launch enqueues every command on a queue of the graph's
//     context, in one backend call, as often as wanted.
//   - update: Update changes a recorded launch's arguments and range for
//     the launches that follow (cuGraphExecKernelNodeSetParams, SYCL's
//     command_graph::update(node)); the kernel cannot change.
//
// A recorded launch remembers its source location, so that a traced graph
// launch shows its commands at the lines that recorded them, inside one
// range named after the graph.

// Graph is a list of commands recorded on a queue, replayed with Launch.
// Its methods are safe for concurrent use, except that only the goroutine
// that called Record may enqueue on the queue while it records.
type Graph struct {
	name      string
	rangeName string
	ctx       *Context
	q         *Queue // the queue that recorded it
	rec       *recording

	umu sync.Mutex // serializes Update; taken before mu
	mu  sync.Mutex // guards what follows
	// state is graphRecording, graphFinal or graphReleased.
	state graphState
	cmds  []graphCmd
	uses  []memUse    // the memory the commands use, each once
	smps  []smpUse    // the samplers the commands use
	owned []memUse    // allocations made while recording: the graph frees them
	execs []graphExec // prepared for a queue each
}

// graphState is where a graph is in its life.
type graphState uint8

const (
	graphRecording graphState = iota
	graphFinal
	graphReleased
)

// graphCmd is one recorded command.
type graphCmd struct {
	kind trace.CmdKind
	name string      // the kernel's name or the command's
	node *trace.Node // where it was recorded
	// A kernel launch: the kernel object it was recorded from, its
	// arguments, its range, and the graph's own kernel object (made by
	// finalize) with those arguments set.
	kern *Kernel
	args []graphArg
	r    Range
	own  driver.Kernel
	// A copy, fill or write: the backend's command, buffers resolved.
	dc   driver.GraphCommand
	mems []*Mem // the memory it uses
}

// graphArg is a recorded kernel argument: a buffer (mem), a sampler
// (smp), local memory or a value.
type graphArg struct {
	kind  driver.ArgKind
	size  uintptr
	bits  uint64
	bytes string // a value of more than 8 bytes
	mem   *Mem
	smp   *samplerObject
}

// smpUse is a sampler argument of a recorded launch: command cmd's
// argument arg.
type smpUse struct {
	s        *samplerObject
	cmd, arg int
}

// check reports whether the sampler was released since it was recorded.
func (u smpUse) check() error {
	if err := u.s.check(); err != nil {
		return fmt.Errorf("argument %d: %w", u.arg, err)
	}
	return nil
}

// memUse is memory a graph uses, with its generation when recorded: a
// Free since then changes it.
type memUse struct {
	m   *Mem
	gen uint32
	cmd int // the first command that uses it
}

// graphExec is a graph prepared for one queue, as opt asked.
type graphExec struct {
	q   *Queue
	drv driver.Graph
	opt driver.GraphOptions
}

// recording is the state of a queue that records: the graph, and the
// goroutine that may enqueue. An update's private queue has upd set
// instead, and any goroutine may use it.
type recording struct {
	g   *Graph
	gid uint64
	upd *graphUpdate
}

// graphUpdate collects the launch that an Update's function enqueues.
type graphUpdate struct {
	n   int
	cmd graphCmd
}

// Record records into a new graph the commands that record enqueues on q,
// instead of running them, and prepares the graph for Launch. name names
// the graph in errors and traces. While record runs, only its goroutine
// may enqueue on q: another goroutine's command is an error, and nothing
// of it is recorded or run. Recorded commands wait for no events and
// create none: a recorded Fill or CopyTo returns a nil Event, and
// EnqueueEvent, a blocking read and a Marker are errors that record
// nothing (record may go on). An allocation on q while it records belongs
// to the graph, which frees it when it is released. If record returns an
// error, Record returns it, wrapped, and no graph.
//
// Preparing the graph gives every recorded launch a kernel object of its
// own with its arguments set (a sampler argument as the context's sampler
// object, which must still be live when the graph launches), and has the
// backend prepare the commands for q: a command buffer, or a list of
// launches replayed by one call, which is what a graph with a sampler
// argument gets where the backend's command buffers cannot hold one. A
// backend whose kernels take no samplers fails Record with an error naming
// the kernel and the argument.
func (q *Queue) Record(name string, record func(q *Queue) error) (*Graph, error) {
	if record == nil {
		return nil, fmt.Errorf("record graph %q: %w: nil function", name, ErrInvalidArgument)
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("record graph %q: %w", name, err)
	}
	g := &Graph{name: name, rangeName: "graph " + name, ctx: q.ctx, q: q}
	g.rec = &recording{g: g, gid: goid()}
	if !q.rec.CompareAndSwap(nil, g.rec) {
		q.ctx.exit()
		return nil, fmt.Errorf("record graph %q: %w: queue %d records graph %q already", name, ErrInvalidArgument, q.id, q.rec.Load().g.name)
	}
	q.ctx.graphs.add(g)
	q.ctx.exit() // record may close the context
	err := func() error {
		defer q.rec.CompareAndSwap(g.rec, nil) // even if record panics
		return record(q)
	}()
	if err == nil {
		err = g.finalize()
	} else {
		err = fmt.Errorf("record graph %q: %w", name, err)
	}
	if err != nil {
		g.Release()
		return nil, err
	}
	return g, nil
}

// finalize ends the recording and prepares the graph for Launch: every
// recorded launch gets a kernel object of its own with its arguments set,
// and the backend prepares the commands for the recording queue.
func (g *Graph) finalize() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphRecording {
		return g.stateError("finalize")
	}
	g.q.rec.CompareAndSwap(g.rec, nil)
	if err := g.ctx.enter(); err != nil {
		g.state = graphReleased
		return fmt.Errorf("finalize graph %q: %w", g.name, err)
	}
	defer g.ctx.exit()
	for i := range g.cmds {
		if err := g.checkCmd(i); err != nil {
			return fmt.Errorf("finalize graph %q: %w", g.name, err)
		}
	}
	g.state = graphFinal
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind != trace.Kernel {
			continue
		}
		if err := setArgs(c.own, c.args, nil); err != nil {
			g.releaseLocked()
			return fmt.Errorf("finalize graph %q: %s: %w", g.name, g.describe(i), err)
		}
	}
	if _, err := g.exec(g.q); err != nil {
		g.releaseLocked()
		return fmt.Errorf("finalize graph %q: %w", g.name, err)
	}
	return nil
}

// setArgs sets the arguments of k that differ from old (all of them when
// old is nil).
func setArgs(k driver.Kernel, args, old []graphArg) error {
	for i, a := range args {
		if old != nil && old[i] == a {
			continue
		}
		var err error
		switch {
		case a.kind == driver.ArgBuffer:
			var b driver.Buffer
			if b, err = a.mem.driverBuffer(); err == nil {
				err = k.SetArgBuffer(i, b)
			}
		case a.kind == driver.ArgLocal:
			err = k.SetArgLocal(i, a.size)
		case a.kind == driver.ArgSampler:
			err = setArgSampler(k, i, a.smp)
		case a.size > 8:
			b := []byte(a.bytes)
			err = k.SetArgBytes(i, a.size, unsafe.Pointer(&b[0]))
		default:
			err = k.SetArgScalar(i, a.size, a.bits)
		}
		if err != nil {
			return fmt.Errorf("set argument %d: %w", i, err)
		}
	}
	return nil
}

// setArgSampler sets argument i of the graph's kernel object k to the
// sampler s: the driver's object itself, not its handle as a value.
func setArgSampler(k driver.Kernel, i int, s *samplerObject) error {
	sk, ok := k.(driver.SamplerKernel)
	if !ok {
		return fmt.Errorf("%w: a sampler, and the backend's kernels take no samplers, so a graph cannot record it", errors.ErrUnsupported)
	}
	if err := s.check(); err != nil {
		return err
	}
	return sk.SetArgSampler(i, s.drv)
}

// exec returns the graph prepared for q, preparing it on q's first
// launch. Called with g.mu held.
func (g *Graph) exec(q *Queue) (driver.Graph, error) {
	for _, x := range g.execs {
		if x.q == q {
			return x.drv, nil
		}
	}
	cmds := make([]driver.GraphCommand, len(g.cmds))
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind == trace.Kernel {
			cmds[i] = driver.GraphCommand{Kind: driver.GraphKernel, Kernel: c.own, Range: c.r.ndrange()}
		} else {
			cmds[i] = c.dc
		}
	}
	var x driver.Graph
	var opt driver.GraphOptions
	var err error
	if gq, ok := q.drv.(driver.GraphQueue); ok {
		opt = g.options(gq.GraphCaps())
		x, err = gq.NewGraph(cmds, opt)
	} else {
		x = &loopGraph{q: q.drv, cmds: cmds}
	}
	if err != nil {
		return nil, fmt.Errorf("prepare for queue %d of %q: %w", q.id, q.dev.Name, err)
	}
	g.execs = append(g.execs, graphExec{q: q, drv: x, opt: opt})
	return x, nil
}

// options chooses how a backend with caps prepares the graph: as the
// device API's own graph object where it has one and the environment
// allows it (graphConfig), unless a recorded launch has a sampler argument
// that the object cannot hold.
func (g *Graph) options(caps driver.GraphCaps) driver.GraphOptions {
	return driver.GraphOptions{Native: g.ctx.graphCfg.allows(caps.Native) && (caps.NativeSamplers || len(g.smps) == 0)}
}

// Launch enqueues the graph's commands on q after the events of wait, in
// the order they were recorded, with one backend call. q must be a queue
// of the graph's context. A buffer that a command uses and that was freed
// since it was recorded is an error that names the command, and nothing
// is enqueued. Launch creates no event; Queue.Marker gives one.
func (g *Graph) Launch(q *Queue, wait ...*Event) error {
	if g == nil {
		return fmt.Errorf("launch graph: %w: nil graph", ErrInvalidArgument)
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	defer q.ctx.exit()
	if q.ctx != g.ctx {
		return fmt.Errorf("launch graph %q: %w", g.name, q.ctx.sameContext("the graph", g.ctx))
	}
	if r := q.rec.Load(); r != nil {
		if r.g == g {
			return fmt.Errorf("launch graph %q: %w: it is still recording", g.name, ErrInvalidArgument)
		}
		return fmt.Errorf("launch graph %q: %w: queue %d records graph %q (graphs do not nest)", g.name, ErrInvalidArgument, q.id, r.g.name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphFinal {
		return g.stateError("launch")
	}
	for _, u := range g.uses {
		if err := u.check(); err != nil {
			return fmt.Errorf("launch graph %q: %s: %w", g.name, g.describe(u.cmd), err)
		}
	}
	for _, u := range g.smps {
		if err := u.check(); err != nil {
			return fmt.Errorf("launch graph %q: %s: %w", g.name, g.describe(u.cmd), err)
		}
	}
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	x, err := g.exec(q)
	if err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	if q.ctx.tr.Enabled() {
		return g.tracedLaunch(q, x, dw)
	}
	if _, err := x.Launch(dw, false); err != nil {
		return fmt.Errorf("launch graph %q on queue %d of %q: %w", g.name, q.id, q.dev.Name, err)
	}
	g.recordUses(q)
	return nil
}

// tracedLaunch is Launch's enqueue under a trace range named after the
// graph, with a task per command at its recorded node.
func (g *Graph) tracedLaunch(q *Queue, x driver.Graph, dw []driver.Event) error {
	rg := q.ctx.tr.Range(g.rangeName)
	defer rg.End()
	tasks := make([]*trace.Task, len(g.cmds))
	for i := range g.cmds {
		tasks[i] = q.tq.BeginNode(g.cmds[i].node)
	}
	_, err := x.Launch(dw, false)
	for _, tk := range tasks {
		tk.EndRelease()
	}
	if err != nil {
		return fmt.Errorf("launch graph %q on queue %d of %q: %w", g.name, q.id, q.dev.Name, err)
	}
	g.recordUses(q)
	return nil
}

// recordUses records the use of the graph's memory by the launch just
// enqueued on q, for stream-ordered reuse.
func (g *Graph) recordUses(q *Queue) {
	if !q.ctx.multiQueue.Load() {
		return
	}
	p := q.pts.point()
	for _, u := range g.uses {
		u.m.used(q, p)
	}
}

// check reports whether the memory was freed since it was recorded.
func (u memUse) check() error {
	if u.m.gen.Load() != u.gen {
		return fmt.Errorf("buffer: %w since the graph recorded it", ErrFreed)
	}
	if _, err := u.m.driverBuffer(); err != nil {
		return err
	}
	return nil
}

// Update changes the recorded kernel launch cmd (commands count from 0 in
// the order recorded) for the launches that follow: enqueue is called
// with a queue that records instead of running, and must enqueue exactly
// one launch of the same kernel, typically the generated Enqueue of the
// kernel spec with new field values (a swapped pair of buffers, a new
// scalar), so that the compiler checks the types as for any Enqueue.
// An argument whose kind or size differs from the recorded one, another
// kernel, no launch or more than one, is an error naming the graph and the
// command, and the graph is left as it was.
func (g *Graph) Update(cmd int, enqueue func(q *Queue) error) error {
	if g == nil {
		return fmt.Errorf("update graph: %w: nil graph", ErrInvalidArgument)
	}
	g.umu.Lock()
	defer g.umu.Unlock()
	g.mu.Lock()
	if g.state != graphFinal {
		g.mu.Unlock()
		return g.stateError("update")
	}
	if cmd < 0 || cmd >= len(g.cmds) {
		n := len(g.cmds)
		g.mu.Unlock()
		return fmt.Errorf("update graph %q: command %d: %w: the graph has %d commands", g.name, cmd, ErrOutOfRange, n)
	}
	if c := &g.cmds[cmd]; c.kind != trace.Kernel {
		err := fmt.Errorf("update graph %q: %s: %w: only kernel launches can be updated", g.name, g.describe(cmd), ErrInvalidArgument)
		g.mu.Unlock()
		return err
	}
	q0 := g.q
	g.mu.Unlock()
	// A private queue on the same device records the update; the graph's
	// queue stays free for other goroutines.
	uq := &Queue{ctx: q0.ctx, dev: q0.dev, drv: q0.drv, profiling: q0.profiling, id: q0.id, tq: q0.tq}
	upd := &graphUpdate{}
	uq.rec.Store(&recording{g: g, upd: upd})
	if enqueue == nil {
		return fmt.Errorf("update graph %q: %s: %w: nil function", g.name, g.describe(cmd), ErrInvalidArgument)
	}
	if err := enqueue(uq); err != nil {
		return fmt.Errorf("update graph %q: %s: %w", g.name, g.describe(cmd), err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphFinal {
		return g.stateError("update")
	}
	if err := g.apply(cmd, upd); err != nil {
		return fmt.Errorf("update graph %q: %s: %w", g.name, g.describe(cmd), err)
	}
	return nil
}

// apply makes the launch that upd collected command cmd's. Called with
// g.mu held.
func (g *Graph) apply(cmd int, upd *graphUpdate) error {
	c := &g.cmds[cmd]
	if upd.n != 1 {
		return fmt.Errorf("%w: the update enqueued %d kernel launches, not one", ErrInvalidArgument, upd.n)
	}
	nc := &upd.cmd
	if nc.kern.name != c.kern.name || nc.kern.prog.name != c.kern.prog.name {
		return fmt.Errorf("%w: the update launches kernel %q of %q, the command kernel %q of %q", ErrInvalidArgument, nc.kern.name, nc.kern.prog.name, c.kern.name, c.kern.prog.name)
	}
	if len(nc.args) != len(c.args) {
		return fmt.Errorf("%w: the update sets %d arguments, the command %d", ErrInvalidArgument, len(nc.args), len(c.args))
	}
	for i, a := range nc.args {
		if o := c.args[i]; a.kind != o.kind || a.size != o.size {
			return fmt.Errorf("argument %d: %w: %s where the command has %s", i, ErrInvalidArgument, a.describe(), o.describe())
		}
	}
	if err := g.ctx.enter(); err != nil {
		return err
	}
	defer g.ctx.exit()
	if err := setArgs(c.own, nc.args, c.args); err != nil {
		// Some arguments may be set: put the recorded ones back.
		setArgs(c.own, c.args, nil)
		return err
	}
	c.args, c.r, c.mems = nc.args, nc.r, nc.mems
	var errs []error
	for _, x := range g.execs {
		if err := x.drv.Update(cmd, c.r.ndrange()); err != nil {
			errs = append(errs, fmt.Errorf("queue %d: %w", x.q.id, err))
		}
	}
	g.collectUses()
	return errors.Join(errs...)
}

// describe describes a recorded argument for errors.
func (a graphArg) describe() string {
	switch a.kind {
	case driver.ArgBuffer:
		return "a buffer"
	case driver.ArgLocal:
		return fmt.Sprintf("%d bytes of local memory", a.size)
	case driver.ArgSampler:
		return "a sampler"
	}
	return fmt.Sprintf("a value of %d bytes", a.size)
}

// Release releases what the graph holds: its kernel objects, what the
// backend prepared, and the memory allocated on the queue while it
// recorded, which it frees (stream-ordered after its launches). A graph
// still recording stops recording. Releasing twice does nothing.
func (g *Graph) Release() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.ctx.enter(); err != nil {
		// Close released everything.
		g.state, g.owned = graphReleased, nil
		return nil
	}
	defer g.ctx.exit()
	var err error
	if g.state != graphReleased {
		err = g.releaseLocked()
	}
	var errs []error
	for _, u := range g.owned {
		if u.m.gen.Load() == u.gen && !u.m.freed.Load() {
			if ferr := u.m.Free(); ferr != nil {
				errs = append(errs, ferr)
			}
		}
	}
	g.owned = nil
	if err = errors.Join(append([]error{err}, errs...)...); err != nil {
		return fmt.Errorf("release graph %q: %w", g.name, err)
	}
	return nil
}

// releaseLocked releases the backend's graphs and the kernel objects and
// marks g released. Called with g.mu held and the context entered (or
// closing).
func (g *Graph) releaseLocked() error {
	g.q.rec.CompareAndSwap(g.rec, nil)
	g.state = graphReleased
	var errs []error
	for _, x := range g.execs {
		errs = append(errs, x.drv.Release())
	}
	g.execs = nil
	for i := range g.cmds {
		if k := g.cmds[i].own; k != nil {
			errs = append(errs, k.Release())
			g.cmds[i].own = nil
		}
	}
	g.ctx.graphs.remove(g)
	return errors.Join(errs...)
}

// stateError is the error of op on a graph that is not in the state op
// needs. Called with g.mu held.
func (g *Graph) stateError(op string) error {
	switch {
	case g.state == graphRecording:
		return fmt.Errorf("%s graph %q: %w: it is still recording", op, g.name, ErrInvalidArgument)
	case g.ctx.closed.Load():
		return fmt.Errorf("%s graph %q: %w", op, g.name, ErrClosed)
	case g.state == graphReleased:
		return fmt.Errorf("%s graph %q: %w: it was released", op, g.name, ErrInvalidArgument)
	}
	return fmt.Errorf("%s graph %q: %w: it is finalized already", op, g.name, ErrInvalidArgument)
}

// describe names command i for errors: its number, kind, name and where
// it was recorded.
func (g *Graph) describe(i int) string {
	c := &g.cmds[i]
	where := ""
	if n := c.node; n != nil && n.Line > 0 {
		where = fmt.Sprintf(" at %s:%d", n.File, n.Line)
	}
	if c.kind == trace.Kernel {
		return fmt.Sprintf("command %d (kernel %q%s)", i, c.name, where)
	}
	return fmt.Sprintf("command %d (%s%s)", i, c.name, where)
}

// checkCmd checks that the memory and the samplers of command i are still
// live.
func (g *Graph) checkCmd(i int) error {
	for _, u := range g.uses {
		if u.cmd == i {
			if err := u.check(); err != nil {
				return fmt.Errorf("%s: %w", g.describe(i), err)
			}
		}
	}
	for _, u := range g.smps {
		if u.cmd == i {
			if err := u.check(); err != nil {
				return fmt.Errorf("%s: %w", g.describe(i), err)
			}
		}
	}
	return nil
}

// collectUses lists the memory of every command once, and the sampler
// arguments of every launch. Called with g.mu held.
func (g *Graph) collectUses() {
	g.uses, g.smps = g.uses[:0], g.smps[:0]
	for i := range g.cmds {
		for j, a := range g.cmds[i].args {
			if a.kind == driver.ArgSampler {
				g.smps = append(g.smps, smpUse{s: a.smp, cmd: i, arg: j})
			}
		}
		for _, m := range g.cmds[i].mems {
			if m == nil {
				continue
			}
			seen := false
			for _, u := range g.uses {
				seen = seen || u.m == m
			}
			if !seen {
				g.uses = append(g.uses, memUse{m: m, gen: m.gen.Load(), cmd: i})
			}
		}
	}
}

// The recording hooks: the enqueue paths of rt call these when q.rec is
// set, after checking their arguments and before the driver sees anything.

// checkGoroutine returns the error of a command on a recording queue from a
// goroutine other than the recording one.
func (r *recording) checkGoroutine(q *Queue) error {
	if r.upd != nil || goid() == r.gid {
		return nil
	}
	return fmt.Errorf("%w: queue %d of %q is recording graph %q in another goroutine (nothing was enqueued)", ErrInvalidArgument, q.id, q.dev.Name, r.g.name)
}

// add appends c to the graph, or hands it to the update; it returns the
// error of a command that cannot be recorded.
func (r *recording) add(c graphCmd, wait []driver.Event) error {
	g := r.g
	if len(wait) > 0 {
		return fmt.Errorf("%w: graph %q: a recorded command waits for no events (the graph's commands run in the order recorded)", ErrInvalidArgument, g.name)
	}
	if r.upd != nil {
		if c.kind == trace.Kernel {
			r.upd.n++
			r.upd.cmd = c
			return nil
		}
		return fmt.Errorf("%w: graph %q: an update records one kernel launch, not a %s", ErrInvalidArgument, g.name, c.name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphRecording {
		return g.stateError("record into")
	}
	g.cmds = append(g.cmds, c)
	g.collectUses()
	return nil
}

// recordKernel records a launch of k over r. skip is as for beginTask.
func (r *recording) recordKernel(q *Queue, k *Kernel, rg Range, wait []driver.Event, event bool, skip int) error {
	if event {
		return fmt.Errorf("%w: graph %q: a recorded launch has no event (use Enqueue, not EnqueueEvent)", ErrInvalidArgument, r.g.name)
	}
	args, mems, err := k.snapshot()
	if err != nil {
		return fmt.Errorf("graph %q: %w", r.g.name, err)
	}
	c := graphCmd{kind: trace.Kernel, name: k.name, kern: k, args: args, r: rg, mems: mems}
	if r.upd != nil {
		return r.add(c, wait)
	}
	c.node = q.tq.Site(trace.Kernel, k.name, skip+2)
	// The graph's own kernel object, made now, while the program is
	// certainly alive (the caller holds k); finalize sets its arguments.
	if c.own, err = k.prog.drv.NewKernel(k.name); err != nil {
		return fmt.Errorf("graph %q: kernel %q: %w", r.g.name, k.name, err)
	}
	if err := r.add(c, wait); err != nil {
		c.own.Release()
		return err
	}
	return nil
}

// recordCommand records a copy, fill or write. skip is as for beginTask.
func (r *recording) recordCommand(q *Queue, kind trace.CmdKind, op string, dc driver.GraphCommand, mems []*Mem, wait []driver.Event, skip int) error {
	c := graphCmd{kind: kind, name: op, dc: dc, mems: mems, node: q.tq.Site(kind, op, skip+2)}
	return r.add(c, wait)
}

// refuse is the error of a command that a graph cannot record.
func (r *recording) refuse(op, why string) error {
	return fmt.Errorf("%s: %w: graph %q is recording on this queue: %s", op, ErrInvalidArgument, r.g.name, why)
}

// snapshot returns k's arguments as set now, from its launch record, and
// the memory of its buffer arguments.
func (k *Kernel) snapshot() ([]graphArg, []*Mem, error) {
	args := make([]graphArg, k.nargs)
	var mems []*Mem
	for i := range args {
		s := &k.args.Slots[i]
		switch {
		case s.Kind == driver.ArgBuffer:
			m := k.bufs[i]
			args[i] = graphArg{kind: driver.ArgBuffer, size: uintptr(s.Size), mem: m}
			mems = append(mems, m)
		case s.Kind == driver.ArgLocal:
			args[i] = graphArg{kind: driver.ArgLocal, size: uintptr(s.Size)}
		case s.Kind == driver.ArgSampler:
			args[i] = graphArg{kind: driver.ArgSampler, size: uintptr(s.Size), smp: k.samplers[i]}
		case s.Size == 0:
			return nil, nil, fmt.Errorf("kernel %q: argument %d: %w: not set", k.name, i, ErrInvalidArgument)
		case s.Size <= 8:
			args[i] = graphArg{kind: driver.ArgScalar, size: uintptr(s.Size), bits: s.Bits}
		default:
			args[i] = graphArg{kind: driver.ArgScalar, size: uintptr(s.Size), bytes: string(k.args.Bytes[s.Bits : s.Bits+uint64(s.Size)])}
		}
	}
	return args, mems, nil
}

// own makes m, allocated on q while it records, the graph's, when the
// recording goroutine allocated it.
func (r *recording) own(m *Mem) {
	if r.upd != nil || goid() != r.gid {
		return
	}
	g := r.g
	g.mu.Lock()
	g.owned = append(g.owned, memUse{m: m, gen: m.gen.Load()})
	g.mu.Unlock()
}

// graphSet is a context's live graphs, which Close releases.
type graphSet struct {
	mu sync.Mutex
	m  map[*Graph]struct{}
}

func (s *graphSet) add(g *Graph) {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[*Graph]struct{})
	}
	s.m[g] = struct{}{}
	s.mu.Unlock()
}

func (s *graphSet) remove(g *Graph) {
	s.mu.Lock()
	delete(s.m, g)
	s.mu.Unlock()
}

// closeGraphs releases every live graph; Close calls it once the queues
// have finished, so that no launch is in flight, and before the memory and
// the kernels go.
func (c *Context) closeGraphs() []error {
	c.graphs.mu.Lock()
	gs := make([]*Graph, 0, len(c.graphs.m))
	for g := range c.graphs.m {
		gs = append(gs, g)
	}
	c.graphs.mu.Unlock()
	var errs []error
	for _, g := range gs {
		g.mu.Lock()
		if err := g.releaseLocked(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release graph %q: %w", g.name, err))
		}
		g.owned = nil // the allocators' Close frees them
		g.mu.Unlock()
	}
	return errs
}

// loopGraph replays commands through a driver.Queue that prepares none.
type loopGraph struct {
	q    driver.Queue
	cmds []driver.GraphCommand
}

func (l *loopGraph) Launch(wait []driver.Event, event bool) (driver.Event, error) {
	for i, c := range l.cmds {
		w := wait
		if i > 0 {
			w = nil
		}
		var ev driver.Event
		var err error
		switch c.Kind {
		case driver.GraphKernel:
			err = l.q.SubmitKernel(c.Kernel, c.Range, w)
		case driver.GraphCopy:
			ev, err = l.q.CopyBuffer(c.Src, c.Dst, c.SrcOffset, c.DstOffset, c.Size, w)
		case driver.GraphFill:
			ev, err = l.q.FillBuffer(c.Dst, c.Data, c.DstOffset, c.Size, w)
		case driver.GraphWrite:
			_, err = l.q.WriteBuffer(c.Dst, true, c.DstOffset, int64(len(c.Data)), unsafe.Pointer(&c.Data[0]), w)
		}
		if ev != nil {
			ev.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("command %d: %w", i, err)
		}
	}
	if event || len(l.cmds) == 0 && len(wait) > 0 {
		return l.q.Marker(wait)
	}
	return nil, nil
}

func (l *loopGraph) Update(i int, r driver.NDRange) error {
	l.cmds[i].Range = r
	return nil
}

func (l *loopGraph) Release() error { return nil }

var _ driver.Graph = (*loopGraph)(nil)

// goid returns the current goroutine's id, from the header of its stack
// trace ("goroutine 18 [running]:"). Only a recording queue pays for it.
func goid() uint64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// queueRec is the recording state of a queue (Queue.rec).
type queueRec = atomic.Pointer[recording]

// recorder returns the recording state of q, nil when q does not record.
func (q *Queue) recorder() *recording {
	if q == nil {
		return nil
	}
	return q.rec.Load()
}

// recordOp records a copy or fill on q, which records into r. skip is as
// for beginTask.
func (q *Queue) recordOp(r *recording, op string, kind trace.CmdKind, dc driver.GraphCommand, mems []*Mem, wait []*Event, skip int) error {
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err == nil {
		err = r.recordCommand(q, kind, op, dc, mems, dw, skip+1)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// recordTransfer records the blocking transfer x: a write records the
// bytes as they are now; a read is an error, since it would return before
// the graph runs. skip is as for beginTask.
func (r *recording) recordTransfer(q *Queue, x *xfer, dw []driver.Event, skip int) error {
	if x.read() {
		return r.refuse(x.op, "a blocking read cannot be recorded: it would return before the graph runs (nothing was read or recorded)")
	}
	data := bytes.Clone(unsafe.Slice((*byte)(x.host), x.size))
	dc := driver.GraphCommand{Kind: driver.GraphWrite, Dst: x.buf, DstOffset: x.off, Size: x.size, Data: data}
	if err := r.recordCommand(q, x.kind, x.op, dc, []*Mem{x.mem}, dw, skip+1); err != nil {
		return fmt.Errorf("%s: %w", x.op, err)
	}
	return nil
}
