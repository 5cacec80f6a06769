package core

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// The launch path. A Kernel holds a prepared launch record (driver.Args):
// every argument's value as last set, and which ones changed since the
// driver last saw them. Setting an argument only writes the record; the
// launch hands the record to the driver, which, where the backend
// implements driver.ArgLauncher (rt/opencl does), sets the changed
// arguments and enqueues in one call. A generated Enqueue reaches it
// through rt/codegen: Acquire, one setter per argument, Submit
// (generated.go).

// mark notes that argument i changed.
func (k *kernelObject) mark(i int) {
	if s := &k.args.Slots[i]; !s.Changed {
		s.Changed = true
		k.args.Changed++
	}
}

// setScalar records argument i as a value of size bytes (at most 8).
func (k *kernelObject) setScalar(i int, size uintptr, bits uint64) {
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
func (k *kernelObject) setBytes(i int, p unsafe.Pointer, size uintptr) {
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
func (k *kernelObject) setBuffer(i int, m *Mem) error {
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
func (k *kernelObject) holds(i int, m *Mem) bool {
	return uint(i) < uint(len(k.bufs)) && k.bufs[i] == m && m != nil && m.usable()
}

// recordBuffer records argument i as the memory m (a buffer or an image),
// checked by the caller.
func (k *kernelObject) recordBuffer(i int, m *Mem) {
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
func (k *kernelObject) setLocalArg(i int, size int) error {
	switch {
	case size < 0:
		return fmt.Errorf("set argument %d of kernel %q: %w: local memory of %d bytes (rt.Local.Len is negative, or its size in bytes overflows an int)", i, k.name, ErrInvalidArgument, size)
	case size == 0:
		return fmt.Errorf("set argument %d of kernel %q: %w: local memory of 0 bytes", i, k.name, ErrInvalidArgument)
	case checkArgSize(size) != nil:
		return fmt.Errorf("set argument %d of kernel %q: %w: local memory of %d bytes, more than a kernel argument can be (%d)", i, k.name, ErrInvalidArgument, size, maxArgBytes)
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
func (k *kernelObject) bind(i int, m *Mem) {
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
	was := k.bufs[i] != nil
	k.bufs[i], k.held[i] = m, h
	if was != (m != nil) {
		k.indexBufs()
	}
}

// indexBufs lists in bufArgs the arguments that hold memory, which a
// launch visits (useArgs, doneArgs, checkBufs, recordArgs), so that what it
// costs grows with the buffer arguments, not with all of them. Called when
// an argument becomes a buffer or stops being one, which a loop that
// launches one kernel again and again does not do.
func (k *kernelObject) indexBufs() {
	k.bufArgs = k.bufArgs[:0]
	for i, m := range k.bufs {
		if m != nil {
			k.bufArgs = append(k.bufArgs, int32(i))
		}
	}
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
func (k *kernelObject) checkBufs(op string) error {
	for _, i := range k.bufArgs {
		if m := k.bufs[i]; m.gen.Load() != k.held[i].gen || !m.usable() {
			return fmt.Errorf("%s kernel %q: argument %d: buffer: %w since the argument was set", op, k.name, i, ErrFreed)
		}
	}
	return nil
}

// checkRaw checks the arguments of a raw launch: every one set
// (checkSet), and none freed since (checkBufs).
func (k *kernelObject) checkRaw(op string) error {
	if err := k.checkSet(op); err != nil {
		return err
	}
	return k.checkBufs(op)
}

// checkSet returns an error wrapping ErrInvalidArgument that names the
// first argument of k never set, by its index and, where the program keeps
// argument information, its name: the driver would say only
// CL_INVALID_KERNEL_ARGS. A raw launch checks it; a generated Enqueue sets
// every argument. Once every argument has been set, it costs one test.
func (k *kernelObject) checkSet(op string) error {
	if k.allSet {
		return nil
	}
	for i := range k.args.Slots {
		if s := &k.args.Slots[i]; s.Kind == driver.ArgScalar && s.Size == 0 {
			name := "its name unknown: build the program with -cl-kernel-arg-info to have it"
			if info, err := k.argInfo(i); err == nil && info.Name != "" {
				name = fmt.Sprintf("%s %s", info.TypeName, info.Name)
			}
			return fmt.Errorf("%s kernel %q: %w: argument %d (%s) is not set", op, k.name, ErrInvalidArgument, i, name)
		}
	}
	k.allSet = true
	return nil
}

// useArgs registers a use (Mem.useAll) of the memory of every buffer and
// image argument for the launch that follows, which doneArgs ends: a Free
// that races with the launch then releases the memory after the driver has
// taken the launch, never under it. A freed argument is an error wrapping
// ErrFreed, and nothing is registered.
func (k *kernelObject) useArgs(op launchOp) error {
	for j, i := range k.bufArgs {
		if !k.bufs[i].useAll() {
			return k.unuseArgs(op, j)
		}
	}
	return nil
}

// unuseArgs ends the uses that useArgs registered before it found the
// buffer of argument k.bufArgs[j] freed, and returns the error of that.
func (k *kernelObject) unuseArgs(op launchOp, j int) error {
	for _, u := range k.bufArgs[:j] {
		k.bufs[u].doneAll()
	}
	return fmt.Errorf("%s kernel %q: argument %d: buffer: %w", op, k.name, k.bufArgs[j], ErrFreed)
}

// doneArgs ends the uses that useArgs registered.
func (k *kernelObject) doneArgs() {
	for _, i := range k.bufArgs {
		k.bufs[i].doneAll()
	}
}

// flush sets the changed arguments through the driver's kernel one by
// one: the launch path of a backend without driver.ArgLauncher, and what
// the driver must know before it reports work-group info.
func (k *kernelObject) flush() error {
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
			err = k.drv.SetArgBuffer(i, k.argBuffer(i))
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

// enqueue hands the record to the driver and enqueues k after dw over the
// range that checkRange has just passed (k.passed.nd, prepared as the
// arguments are): one call where the queue is a driver.ArgLauncher, else
// the changed arguments one by one and then the launch. It returns a
// driver event only when event is true.
func (k *kernelObject) enqueue(q *Queue, dw []driver.Event, event bool) (driver.Event, error) {
	if q.launcher != nil && k.foreign == 0 {
		return q.launcher.LaunchArgs(k.drv, &k.args, &k.passed.nd, dw, event)
	}
	return k.enqueueFlushed(q, dw, event)
}

// enqueueFlushed is enqueue on a queue that is no driver.ArgLauncher, or
// for a kernel with a buffer argument that has no native handle.
func (k *kernelObject) enqueueFlushed(q *Queue, dw []driver.Event, event bool) (driver.Event, error) {
	if err := k.flush(); err != nil {
		return nil, err
	}
	if event {
		return q.drv.EnqueueKernel(k.drv, k.passed.nd, dw)
	}
	return nil, q.drv.SubmitKernel(k.drv, k.passed.nd, dw)
}

// The kernel's roles, one type each, as database/sql keeps DB, Conn,
// driverConn, Stmt and connStmt apart:
//   - kernelObject: a driver kernel object with its launch record, which
//     the launch path takes (launch.go). It is embedded in the two kinds of
//     kernel that are launched:
//   - Kernel: a spec's instance, which generated code holds between Acquire
//     and SubmitSpec or LaunchSpec (rt/codegen's Instance; instance.go);
//   - RawKernel: rt/raw's Kernel, whose arguments the caller sets by hand,
//     live in its context until released (raw.go);
//   - prototype: the program cache's kernel of one (program variant,
//     kernel, device), which is never launched: its instances are made
//     from it (instance.go).
//
// kernelObject has no exported method, so that neither rt/codegen's
// Instance nor rt/raw's Kernel, defined on the types that embed it, shows
// one of its own.

// kernelObject is a kernel object of a built program with its prepared
// launch record: the argument values as last set.
//
// Invariants:
//   - A kernelObject has one owner at a time and no lock: an instance's
//     belongs to the goroutine that acquired it until it is parked again
//     (instance.go), a raw kernel's to its caller, who must not set it up
//     from two goroutines at once. Nothing else writes args, bufs, held,
//     ids, samplers or label.
//   - A launch reads the record (args, with bufs, ids and held for the
//     memory it uses) only while the driver call lasts, on the owner's
//     goroutine; the driver copies what it keeps, so the record may change
//     as soon as the launch returns. A graph records a copy.
//   - ctx, drv, prog, name, nargs and lim.wg are set when the object is
//     made (an instance shares its prototype's lim.wg: spawn) and never
//     change; lim.wg's entries (work-group info per device) and released
//     are atomic. The rest of lim (the bytes of __local arguments) belongs
//     with the record, to the owner.
//
// The fields that a launch reads come first, in the order it reads them,
// so that they share few cache lines: between two launches the driver's
// own work evicts them.
type kernelObject struct {
	// args is the prepared launch record (see "The launch path"): every
	// argument's value as last set, and which ones changed since the
	// driver last saw them. SetScalar (generated.go) updates a scalar
	// argument in place.
	args       driver.Args
	pooledArgs int32    // buffer arguments that are allocator memory
	foreign    int32    // buffer arguments whose driver buffer has no native handle
	ctx        *Context // prog's
	drv        driver.Kernel
	name       string
	// label is the name that traces and graphs give the kernel's
	// launches: name, and for a spec's instance the
	// specialization-constant values of its program's variant (Kernel's
	// specs), set by Acquire.
	label string

	// The rest of the launch record: for buffer arguments their memory,
	// whose use launches record.
	bufs    []*Mem
	bufArgs []int32   // the arguments whose bufs entry is not nil, in order (indexBufs)
	held    []heldArg // by argument: what bind kept of a buffer's memory
	passed  passedLaunch
	lim     kernelLimits // local memory and work-group limits
	ids     []uint64     // by argument: a buffer's Mem.id (a driver may reuse a released handle)

	prog     *builtProgram
	nargs    int
	allSet   bool       // every argument has been set since the object was made (checkSet)
	site     launchSite // what a queue's launch log keeps of a launch of k (fault.go)
	released atomic.Bool
	samplers []*samplerObject // by argument: the context's sampler of a sampler argument (sampler.go)
}

// Kernel is a spec's kernel instance: a kernel object made from the cached
// program of its prototype (instance.go), which serves any spec of its
// kernel, one at a time. rt/codegen calls it Instance: generated code holds
// one between Acquire and SubmitSpec or LaunchSpec (generated.go). rt does
// not export it.
//
// An instance is owned by exactly one of: a queue's slot, where it parks
// between launches, its prototype's pool, or the goroutine that acquired
// it, from Acquire until the launch parks it again; only that owner reads
// or writes it, with no lock. Acquire sets hit, decl, nglobals, hidden and
// specs for the spec it serves, and clears setErr; the setters write
// setErr and the launch record.
//
// The object comes first, as the setters and the launch path read it; the
// instance's own fields follow, in the order a launch reads them.
type Kernel struct {
	kernelObject

	// hit is where the instance parks between launches (speclaunch.go,
	// instance.go).
	hit    specHit
	setErr error // the first error of setting an argument since Acquire
	// decl is the spec the instance serves, nglobals the number of its
	// device globals, and hidden holds, per device index, their storage,
	// bound as hidden arguments (bindHidden).
	nglobals int32
	decl     *desc.Kernel
	hidden   [][]*Mem
	specs    []progcache.SpecValue // the specialization-constant values of the program's variant
}

// RawKernel is rt/raw's Kernel: a kernel object of a built program whose
// arguments the caller sets by hand, live in its context (live.go) until
// the caller releases it, or Close does. The caller must not set one up
// from two goroutines at once; a launch checks that every argument was set
// and that none was freed since (checkRaw), which a spec's instance, whose
// setters set every argument at each launch, does not need.
type RawKernel struct {
	kernelObject
}

// object returns the kernel object of k, or nil for a nil k.
func (k *RawKernel) object() *kernelObject {
	if k == nil {
		return nil
	}
	return &k.kernelObject
}

// prototype is the program cache's kernel of one (program variant, kernel,
// device): what the cache's entry holds (progcache.Kernel.Object), never
// launched. Its driver kernel, made when the cache first asks for the
// kernel, tells how many arguments the kernel takes; its instances are
// made from the cached program (spawn) and given back to its pool.
//
// drv, prog, name, nargs and wg are set by cacheBuilder.NewKernel and never
// change; the cache releases drv and the pool's instances, once, when it
// evicts the kernel or closes (cacheBuilder.ReleaseKernel). wg's entries,
// the work-group info per device that every instance shares, and label are
// atomic; pool has a mutex of its own.
type prototype struct {
	drv   driver.Kernel
	prog  string // the program's name
	name  string
	nargs int
	wg    []atomic.Pointer[wgInfo]
	pool  kernelPool             // spare instances (instance.go)
	label atomic.Pointer[string] // the label of its instances, made once (variantLabel)
}

// Kernel creates the kernel called name for rt/raw: the caller releases
// it, or the context's Close does (live.go). A name that the program does
// not define is an error wrapping ErrNoKernel.
func (p *builtProgram) Kernel(name string) (*RawKernel, error) {
	k := new(RawKernel)
	if err := p.initObject(&k.kernelObject, name, nil); err != nil {
		return nil, err
	}
	c := p.ctx
	if err := c.enter(); err != nil {
		k.release()
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	defer c.exit()
	c.live.add(k)
	return k, nil
}

// driverKernel creates the driver's kernel called name of p, and returns
// it with the number of arguments it takes: for a kernel object
// (initObject) or a prototype (cacheBuilder.NewKernel).
func (p *builtProgram) driverKernel(name string) (driver.Kernel, int, error) {
	if p == nil {
		return nil, 0, nilProgram(fmt.Sprintf("create kernel %q", name))
	}
	if p.released.Load() {
		return nil, 0, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, ErrClosed)
	}
	if err := p.ctx.enter(); err != nil {
		return nil, 0, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	defer p.ctx.exit()
	drv, err := p.drv.NewKernel(name)
	if err != nil {
		if errors.Is(err, ErrNoKernel) {
			if names, nerr := p.drv.KernelNames(); nerr == nil && len(names) > 0 {
				err = fmt.Errorf("%w (it defines %v)", err, names)
			} else if nerr == nil {
				err = fmt.Errorf("%w (it defines no kernel)", err)
			}
		}
		return nil, 0, p.ctx.failed(nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err))
	}
	n, err := drv.NumArgs()
	if err != nil {
		drv.Release()
		return nil, 0, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	return drv, n, nil
}

// initObject makes k the kernel object called name of p, with no argument
// set: rt/raw's (Kernel) or an instance's (spawn). wg is the work-group
// info to share, an instance's prototype's, or nil for info of k's own.
func (p *builtProgram) initObject(k *kernelObject, name string, wg []atomic.Pointer[wgInfo]) error {
	drv, n, err := p.driverKernel(name)
	if err != nil {
		return err
	}
	if wg == nil {
		wg = make([]atomic.Pointer[wgInfo], len(p.ctx.devices))
	}
	k.prog, k.ctx, k.drv, k.name, k.label, k.nargs = p, p.ctx, drv, name, name, n
	k.site = launchSite{kernel: name, program: p.name}
	k.args.Slots = make([]driver.Arg, n)
	k.ids = make([]uint64, n)
	k.lim.wg = wg
	return nil
}

// release releases k's driver kernel, once.
func (k *kernelObject) release() error {
	if k.released.Swap(true) {
		return nil
	}
	return k.drv.Release()
}

// NumArgs returns the number of arguments the kernel takes.
func (k *RawKernel) NumArgs() int {
	if k == nil {
		return 0
	}
	return k.nargs
}

// nilKernel is the error of an operation on a nil kernel.
func nilKernel(op string) error { return fmt.Errorf("%s: %w: nil kernel", op, ErrInvalidArgument) }

// Release is rt/raw's Kernel.Release, which documents it.
func (k *RawKernel) Release() error {
	if k == nil {
		return nilKernel("release kernel")
	}
	if err := k.ctx.ownerRelease(k); err != nil {
		return fmt.Errorf("release kernel %q: %w", k.name, err)
	}
	return nil
}

// releaseLive and describe make a raw kernel a liveObject (live.go):
// rt/raw's kernels are live under their *RawKernel until released.
func (k *RawKernel) releaseLive() error { return k.release() }

func (k *RawKernel) describe() string { return fmt.Sprintf("kernel %q", k.name) }

// checkArg checks that argument i of the raw kernel k may be set now.
func (k *RawKernel) checkArg(i int) error {
	if k == nil {
		return nilKernel(fmt.Sprintf("set argument %d", i))
	}
	if k.released.Load() {
		if k.ctx.closed.Load() {
			return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, k.ctx.closedError())
		}
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, ErrClosed)
	}
	if i < 0 || i >= k.nargs {
		return fmt.Errorf("set argument %d of kernel %q: %w: it takes %d arguments", i, k.name, ErrOutOfRange, k.nargs)
	}
	return nil
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
