package cuda

/*
#include <stdlib.h>
#include <string.h>
#include "dgen_cu.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/internal/sigsave"
	"github.com/dgen-go/dgen/rt/driver"
)

// funcMaxDynamicShared is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
// (CUfunction_attribute); dgen_cu.h names the attributes that
// dgen_function reads.
const funcMaxDynamicShared = 8

// LineInfoOption is the build option of NVIDIA's OpenCL that makes its
// PTX carry .loc line information, with a .file directive naming each
// source file as its #line directives name it (dgen's device images name
// the .cl files). Where a program's options hold it, LoadProgram also has
// ptxas keep that information in the code (CU_JIT_GENERATE_LINE_INFO),
// so that compute-sanitizer names the .cl line of a faulting access. rt
// adds it to every build under Config.SyncLaunches (LineInfoOptions).
// Measured on an H200 (driver 580): -nv-line-info is accepted; -g alone
// adds no .loc, and -cl-nv-line-info, -lineinfo and -nv-lineinfo are
// refused (CL_INVALID_BUILD_OPTIONS).
const LineInfoOption = "-nv-line-info"

// LineInfoOptions implements driver.LineInfoContext.
func (c *context) LineInfoOptions() string { return LineInfoOption }

// hasOption reports whether the build options opts hold opt.
func hasOption(opts, opt string) bool {
	return strings.Contains(" "+opts+" ", " "+opt+" ")
}

// BuildProgram compiles source with NVIDIA's OpenCL for every device,
// rewrites the PTX and loads it.
func (c *context) BuildProgram(source, options string) (driver.Program, error) {
	ptx := make([][]byte, len(c.devs))
	byName := map[string][]byte{}
	var args map[string][]driver.ArgInfo
	for i, d := range c.devs {
		if b, ok := byName[d.info.Name]; ok {
			ptx[i] = b
			continue
		}
		cc, err := c.compiler(d)
		if err != nil {
			return nil, err
		}
		p, err := cc.BuildProgram(source, options)
		if err != nil {
			return nil, fmt.Errorf("compile with NVIDIA OpenCL: %w", err)
		}
		if args == nil {
			args = argInfos(p, options)
		}
		bins, err := p.Binaries()
		p.Release()
		if err != nil {
			return nil, fmt.Errorf("PTX of NVIDIA OpenCL: %w", err)
		}
		ptx[i], byName[d.info.Name] = bins[0], bins[0]
	}
	p, err := c.LoadProgram(ptx, options)
	if err != nil {
		return nil, err
	}
	p.(*program).args = args
	return p, nil
}

// LoadProgram rewrites each device's PTX (rewritten PTX is unchanged),
// loads it with cuModuleLoadDataEx and finds and loads every kernel's
// function (functions), behind the device's gate (gate.go): NewKernel
// then calls no driver function.
func (c *context) LoadProgram(binaries [][]byte, options string) (driver.Program, error) {
	if len(binaries) != len(c.devs) {
		return nil, fmt.Errorf("cuModuleLoadDataEx: %d binaries for %d devices", len(binaries), len(c.devs))
	}
	p := &program{c: c}
	p.refs.Store(1)
	lineInfo := hasOption(options, LineInfoOption)
	for i, b := range binaries {
		m, err := Rewrite(b)
		if err != nil {
			p.unload()
			return nil, err
		}
		mod, fns, err := c.devs[i].load(m, lineInfo)
		if err != nil {
			p.unload()
			return nil, err
		}
		p.mods = append(p.mods, mod)
		p.ptx = append(p.ptx, m)
		p.fns = append(p.fns, fns)
	}
	return p, nil
}

// function is a kernel's function on a device, found and loaded with its
// module, and the attributes a kernel reads.
type function struct {
	f                   C.CUfunction
	static, priv, maxTB int // bytes of static shared and of private memory, most threads per block
}

// load loads m's PTX into the device's context, and the functions of its
// entries, by name, behind the device's gate; with lineInfo, ptxas keeps
// the PTX's line information (LineInfoOption).
func (d *device) load(m *Module, lineInfo bool) (C.CUmodule, map[string]function, error) {
	defer sigsave.Keep()() // the PTX compiler may install signal handlers: keep Go's
	defer d.gate.hold()()
	mod, err := d.loadModule(m.PTX, lineInfo)
	if err != nil {
		return nil, nil, err
	}
	fns := make(map[string]function, len(m.Entries))
	for _, e := range m.Entries {
		f, err := d.function(mod, e.Name)
		if err != nil {
			C.dgen_module_unload(d.ctx, mod)
			return nil, nil, err
		}
		fns[e.Name] = f
	}
	return mod, fns, nil
}

// function finds and loads the function name of mod.
func (d *device) function(mod C.CUmodule, name string) (function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var (
		f                 function
		static, priv, tpb C.int
		step              C.int
	)
	if r := C.dgen_function(d.ctx, mod, cname, &f.f, &static, &priv, &tpb, &step); r != 0 {
		return function{}, cuError([...]string{"cuModuleGetFunction", "cuFuncLoad", "cuFuncGetAttribute"}[step], r)
	}
	f.static, f.priv, f.maxTB = int(static), int(priv), int(tpb)
	return f, nil
}

// loadModule loads PTX into the device's context.
func (d *device) loadModule(ptx []byte, lineInfo bool) (C.CUmodule, error) {
	src := C.CString(string(ptx))
	defer C.free(unsafe.Pointer(src))
	var (
		log [8192]C.char
		mod C.CUmodule
	)
	li := C.int(0)
	if lineInfo {
		li = 1
	}
	if r := C.dgen_module_load(d.ctx, &mod, src, &log[0], C.size_t(len(log)), li); r != 0 {
		err := cuError("cuModuleLoadDataEx", r)
		var de *driver.Error
		if errors.As(err, &de) {
			de.Log = C.GoString(&log[0])
		}
		return nil, err
	}
	return mod, nil
}

// program is a module per device. Its kernels hold references, so that a
// kernel outlives the program's Release, as in OpenCL.
type program struct {
	c    *context
	mods []C.CUmodule
	ptx  []*Module
	fns  []map[string]function // by device, the functions of the entries
	refs atomic.Int32

	// dyn is the dynamic shared memory each function may use, as set with
	// cuFuncSetAttribute: kernel objects of one function share it, and it
	// only grows, so that one kernel object never lowers another's.
	dynMu sync.Mutex
	dyn   map[C.CUfunction]int

	// args is what NVIDIA's OpenCL said of the kernels' arguments, by
	// kernel, where the program was built from source with
	// -cl-kernel-arg-info (kernelinfo.go).
	args map[string][]driver.ArgInfo
}

// Binaries returns the rewritten PTX of each device, NUL-terminated as
// OpenCL's program binaries are.
func (p *program) Binaries() ([][]byte, error) {
	out := make([][]byte, len(p.ptx))
	for i, m := range p.ptx {
		out[i] = append(append([]byte(nil), m.PTX...), 0)
	}
	return out, nil
}

// KernelNames lists the module's entries, and the kernels the rewrite
// refused (NewKernel returns why).
func (p *program) KernelNames() ([]string, error) {
	var names []string
	for _, e := range p.ptx[0].Entries {
		names = append(names, e.Name)
	}
	for _, e := range p.ptx[0].Refused {
		names = append(names, e.Kernel)
	}
	return names, nil
}

func (p *program) Release() error { return p.unref() }

func (p *program) unref() error {
	if p.refs.Add(-1) != 0 {
		return nil
	}
	return p.unload()
}

func (p *program) unload() error {
	var errs []error
	for i, m := range p.mods {
		d := p.c.devs[i]
		d.settleRings() // a record may name one of the module's functions
		reopen := d.gate.hold()
		errs = append(errs, cuError("cuModuleUnload", C.dgen_module_unload(d.ctx, m)))
		reopen()
	}
	p.mods = nil
	return errors.Join(errs...)
}

// kernel is a kernel's function on every device, with its arguments in C
// memory, where cuLaunchKernel reads them: one slot per parameter, and one
// for the hidden work dimension. The fields that a launch reads come
// first, so that they share few cache lines.
type kernel struct {
	released atomic.Bool
	objDirty bool // the hidden parameters must be set again from imgs and smps (objects.go)
	nset     int
	set      []bool
	locals   []int // indices of __local parameters
	fns      []C.CUfunction
	params   *unsafe.Pointer // C array of pointers into slots
	workDim  *uint32         // the slot of the hidden work dimension; nil where the kernel does not read it

	// last is the grid and blocks of the last launch's range on a
	// device: a loop launches the same range again and again.
	last struct {
		r   driver.NDRange
		dev int
		l   launchShape
		ok  bool
	}

	p      *program
	name   string
	entry  *Entry
	static []int // static shared memory by device
	priv   []int // private memory by device
	maxTPB []int // most threads per block by device
	dynSet []int // the dynamic shared memory the function may use, by device

	slots   unsafe.Pointer // C memory of the argument values
	offs    []uintptr      // slot offsets
	ring    ringSlots      // the slots as a ring's record carries them (ring.go)
	localSz []int          // bytes of local memory by parameter

	// The image and sampler arguments, by parameter (objects.go).
	imgs []*image
	smps []sampler
}

// NewKernel makes a kernel object of the functions that LoadProgram found
// in every device's module: it calls no driver function, so that making
// one never waits for the driver while other goroutines use it.
func (p *program) NewKernel(name string) (driver.Kernel, error) {
	if why := p.ptx[0].refusal(name); why != nil {
		return nil, why
	}
	e, ok := p.ptx[0].Entry(name)
	if !ok {
		return nil, &driver.Error{Call: "cuModuleGetFunction", Code: 500, Name: "CUDA_ERROR_NOT_FOUND", Kind: driver.ErrNoKernel}
	}
	k := &kernel{p: p, name: name, entry: e, set: make([]bool, len(e.Params)), localSz: make([]int, len(e.Params))}
	for i, fns := range p.fns {
		f, ok := fns[name]
		if !ok { // every device's module has the entries of device 0's
			return nil, &driver.Error{Call: "cuModuleGetFunction", Code: 500, Name: "CUDA_ERROR_NOT_FOUND", Kind: driver.ErrNoKernel}
		}
		k.fns = append(k.fns, f.f)
		k.static = append(k.static, f.static)
		k.priv = append(k.priv, f.priv)
		k.maxTPB = append(k.maxTPB, f.maxTB)
		k.dynSet = append(k.dynSet, p.c.devs[i].maxShared-f.static)
	}
	k.allocArgs()
	p.refs.Add(1)
	return k, nil
}

// allocArgs lays out the argument slots in C memory.
func (k *kernel) allocArgs() {
	n := len(k.entry.Params)
	size := uintptr(0)
	for i, p := range k.entry.Params {
		a := uintptr(max(p.Align, 1))
		size = (size + a - 1) &^ (a - 1)
		k.offs = append(k.offs, size)
		size += uintptr(p.Size)
		if p.Local {
			k.locals = append(k.locals, i)
		}
	}
	for range k.entry.Hidden { // 8 bytes each, the .u32 codes too
		size = (size + 7) &^ 7
		k.offs = append(k.offs, size)
		size += 8
	}
	size = (size + 7) &^ 7
	k.offs = append(k.offs, size) // the work dimension
	size += 8
	k.ring = newRingSlots(k.offs, size)
	n += len(k.entry.Hidden)
	k.slots = C.calloc(1, C.size_t(size))
	k.params = (*unsafe.Pointer)(C.malloc(C.size_t(n+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	ps := unsafe.Slice(k.params, n+1)
	for i := range ps {
		ps[i] = unsafe.Add(k.slots, k.offs[i])
	}
	if k.entry.WorkDim {
		k.workDim = (*uint32)(ps[n])
	}
}

func (k *kernel) slot(i int) unsafe.Pointer { return unsafe.Add(k.slots, k.offs[i]) }

// paramArray returns the address of the kernel's parameter array, C
// memory, as dgen_launch takes it.
func (k *kernel) paramArray() C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(k.params))) }

// check checks that argument i exists and takes size bytes (0: any).
func (k *kernel) check(i int, size uintptr, local bool) error {
	if k.released.Load() {
		return fmt.Errorf("set argument %d of kernel %s: the kernel is released", i, k.name)
	}
	if i < 0 || i >= len(k.entry.Params) {
		return &driver.Error{Call: "set kernel argument", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (argument %d of kernel %s, which takes %d)", i, k.name, len(k.entry.Params))}
	}
	p := k.entry.Params[i]
	if p.Local != local {
		what := "a __local pointer"
		if !local {
			what = "not a __local pointer"
		}
		return &driver.Error{Call: "set kernel argument", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (argument %d of kernel %s is %s)", i, k.name, what)}
	}
	if size != 0 && uintptr(p.Size) != size {
		return &driver.Error{Call: "set kernel argument", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (argument %d of kernel %s takes %d bytes, not %d)", i, k.name, p.Size, size)}
	}
	return nil
}

func (k *kernel) mark(i int) {
	if !k.set[i] {
		k.set[i] = true
		k.nset++
	}
}

func (k *kernel) SetArgBuffer(i int, b driver.Buffer) error {
	if err := k.check(i, 8, false); err != nil {
		return err
	}
	if k.entry.Params[i].Object != 0 {
		m, err := asImage("set kernel argument", b)
		if err != nil {
			return err
		}
		return k.setImage(i, m)
	}
	var ptr C.CUdeviceptr
	if b != nil {
		bb, err := asBuffer("set kernel argument", b)
		if err != nil {
			return err
		}
		ptr = bb.ptr
	}
	*(*C.CUdeviceptr)(k.slot(i)) = ptr
	k.mark(i)
	return nil
}

// SetArgScalar copies the first size bytes of v (little-endian) into the
// argument's slot: a Go copy into C memory, which allocates nothing.
func (k *kernel) SetArgScalar(i int, size uintptr, v uint64) error {
	if err := k.check(i, size, false); err != nil {
		return err
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(unsafe.Slice((*byte)(k.slot(i)), size), b[:size])
	k.mark(i)
	return nil
}

func (k *kernel) SetArgBytes(i int, size uintptr, p unsafe.Pointer) error {
	if err := k.check(i, size, false); err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(k.slot(i)), size), unsafe.Slice((*byte)(p), size))
	k.mark(i)
	return nil
}

func (k *kernel) SetArgLocal(i int, size uintptr) error {
	if err := k.check(i, 0, true); err != nil {
		return err
	}
	k.localSz[i] = int(size)
	k.mark(i)
	return nil
}

func (k *kernel) NumArgs() (int, error) { return len(k.entry.Params), nil }

// WorkGroupInfo returns the kernel's limits on the device whose handle is
// device: its local memory is its static shared memory and its __local
// arguments as set, and its required size the .reqntid of its PTX
// (reqd_work_group_size).
func (k *kernel) WorkGroupInfo(device uintptr) (driver.KernelWorkGroupInfo, error) {
	i, d, err := k.p.c.device(device)
	if err != nil {
		return driver.KernelWorkGroupInfo{}, err
	}
	local := k.static[i]
	for _, j := range k.locals {
		local += k.localSz[j]
	}
	return driver.KernelWorkGroupInfo{WorkGroupSize: k.maxTPB[i], PreferredMultiple: d.warp, LocalMemSize: int64(local), PrivateMemSize: int64(k.priv[i]),
		CompileWorkGroupSize: reqntid(k.p.ptx[i].PTX, k.name)}, nil
}

// Release frees the argument memory and the kernel's hold on its program.
func (k *kernel) Release() error {
	if k.released.Swap(true) {
		return nil
	}
	C.free(k.slots)
	C.free(unsafe.Pointer(k.params))
	return k.p.unref()
}

// launchShape is what cuLaunchKernel takes besides the arguments.
type launchShape struct {
	grid, block [3]C.uint
	shared      C.uint
}

// prepare checks the arguments, sets the hidden and __local ones for q's
// device and returns the launch's grid, blocks and dynamic shared memory.
func (k *kernel) prepare(q *queue, r *driver.NDRange) (launchShape, error) {
	var l launchShape
	if k.released.Load() {
		return l, fmt.Errorf("cuLaunchKernel: kernel %s is released", k.name)
	}
	if k.nset < len(k.set) {
		for i, s := range k.set {
			if !s {
				return l, &driver.Error{Call: "cuLaunchKernel", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (argument %d of kernel %s is not set)", i, k.name)}
			}
		}
	}
	if c := &k.last; c.ok && c.r == *r && c.dev == q.dev {
		l.grid, l.block = c.l.grid, c.l.block
	} else {
		if err := k.shape(q, r, &l); err != nil {
			return l, err
		}
		c.r, c.dev, c.l, c.ok = *r, q.dev, l, true
	}
	if k.objDirty {
		if err := k.bindObjects(); err != nil {
			return l, err
		}
	}
	if k.workDim != nil {
		*k.workDim = uint32(r.Dims)
	}
	if len(k.locals) > 0 {
		return l, k.setLocals(q, &l)
	}
	return l, nil
}

// shape computes the grid and blocks of r; with no work-group size given
// it picks one that divides the global size.
func (k *kernel) shape(q *queue, r *driver.NDRange, l *launchShape) error {
	if r.Dims < 1 || r.Dims > 3 {
		return &driver.Error{Call: "cuLaunchKernel", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (%d dimensions)", r.Dims)}
	}
	if r.Offset != [3]int{} {
		return errOffset
	}
	local := r.Local
	if local == [3]int{} {
		local = pickLocal(*r, min(k.maxTPB[q.dev], 256), q.d.maxBlock)
	}
	for i := range 3 {
		g, b := 1, 1
		if i < r.Dims {
			g, b = r.Global[i], local[i]
		}
		if b <= 0 || g <= 0 || g%b != 0 || g/b > q.d.maxGrid[i] || b > q.d.maxBlock[i] {
			return shapeError(r.Dims, r.Global, local, q.d.info.Name)
		}
		l.grid[i], l.block[i] = C.uint(g/b), C.uint(b)
	}
	return nil
}

// shapeError is the error of a launch shape CUDA cannot run. Its own
// function, so that the launch's arrays stay on the stack.
func shapeError(dims int, global, local [3]int, dev string) error {
	return &driver.Error{Call: "cuLaunchKernel", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (global size %v, work-group %v on %s)", global[:dims], local[:dims], dev)}
}

// pickLocal returns work-group sizes, at most budget work-items in all,
// that divide r's global sizes: the largest divisor per dimension, first
// dimension first.
func pickLocal(r driver.NDRange, budget int, maxBlock [3]int) [3]int {
	var local [3]int
	for i := range r.Dims {
		g := r.Global[i]
		b := 1
		for c := min(budget, g, maxBlock[i]); c >= 1; c-- {
			if g%c == 0 {
				b = c
				break
			}
		}
		local[i] = b
		budget = max(budget/b, 1)
	}
	return local
}

// allowDynamic lets f use at least dyn bytes of dynamic shared memory on
// d and returns what it may use now.
func (p *program) allowDynamic(d *device, f C.CUfunction, dyn int) (int, error) {
	p.dynMu.Lock()
	defer p.dynMu.Unlock()
	if cur := p.dyn[f]; cur >= dyn {
		return cur, nil
	}
	if err := cuError("cuFuncSetAttribute", C.dgen_func_set_attr(d.ctx, f, funcMaxDynamicShared, C.int(dyn))); err != nil {
		return 0, err
	}
	if p.dyn == nil {
		p.dyn = make(map[C.CUfunction]int)
	}
	p.dyn[f] = dyn
	return dyn, nil
}

// localAlign is the least alignment of a __local argument's memory.
const localAlign = 16

// setLocals places the __local arguments in the dynamic shared memory,
// after the memory the driver reserves and the kernel's static shared
// memory, and sets the pointers (shared-window addresses) and the size.
func (k *kernel) setLocals(q *queue, l *launchShape) error {
	d, dev := q.d, q.dev
	base := d.reserved + k.static[dev]
	at := base
	for _, i := range k.locals {
		a := max(k.entry.Params[i].LocalAlign, localAlign)
		at = (at + a - 1) &^ (a - 1)
		*(*uint64)(k.slot(i)) = uint64(at)
		at += k.localSz[i]
	}
	dyn := at - base
	if k.static[dev]+dyn > d.optin {
		return fmt.Errorf("cuLaunchKernel: kernel %s needs %d bytes of shared memory (%d static, %d for its __local arguments), more than %s allows a block (%d)",
			k.name, k.static[dev]+dyn, k.static[dev], dyn, d.info.Name, d.optin)
	}
	if dyn > k.dynSet[dev] {
		set, err := k.p.allowDynamic(d, k.fns[dev], dyn)
		if err != nil {
			return err
		}
		k.dynSet[dev] = set
	}
	l.shared = C.uint(dyn)
	return nil
}
