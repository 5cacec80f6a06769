package core

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
)

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
	if size != k.lim.locals[i] {
		k.lim.localBytes += size - k.lim.locals[i]
		k.lim.locals[i] = size
		k.passed.dev = nil // the limits on local memory are checked again
	}
}

// WorkGroupInfo returns the kernel's work-group limits on d, one of its
// context's devices, asked of the driver once per device.
func (k *Kernel) WorkGroupInfo(d *Device) (driver.KernelWorkGroupInfo, error) {
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
	// The driver must know the __local arguments set so far (and only
	// those: a launch reports the others' errors where it sets them).
	if k.lim.localBytes > 0 {
		if err := k.flush(); err != nil {
			return nil, fmt.Errorf("work-group info: %w", err)
		}
	}
	info, err := k.drv.WorkGroupInfo(d.info.Handle)
	if err != nil {
		return nil, fmt.Errorf("work-group info of kernel %q on %q: %w", k.name, d.Name, err)
	}
	// The driver counts the __local arguments set so far; the rest is the
	// kernel's own.
	return &wgInfo{KernelWorkGroupInfo: info, static: max(info.LocalMemSize-k.lim.localBytes, 0)}, nil
}

// checkRange checks r, then the kernel's limits on q's device. A launch
// like the last one that passed (the same range and device, and the same
// local memory of arguments: setLocal forgets the last launch when that
// changes) passes again without a check.
func (k *Kernel) checkRange(q *Queue, r *Range) error {
	if ok := &k.passed; ok.dev == q.dev && ok.same(r) {
		return nil
	}
	return k.checkNewRange(q, r)
}

// checkNewRange is checkRange for a launch unlike the last one that
// passed.
func (k *Kernel) checkNewRange(q *Queue, r *Range) error {
	if err := r.check(); err != nil {
		return err
	}
	if err := k.checkLaunch(q, *r); err != nil {
		return err
	}
	k.passed = passedLaunch{dev: q.dev, nlocal: r.nlocal, noffset: r.noffset, nd: r.ndrange()}
	return nil
}

// passedLaunch is the last launch of a kernel that checkRange passed.
type passedLaunch struct {
	dev             *Device // nil: none yet, or the local memory of arguments changed since
	nlocal, noffset int8    // the range's Range.nlocal and Range.noffset
	// nd is the range as the driver takes it, which the launch passes
	// (enqueue): a launch like the last converts nothing.
	nd driver.NDRange
}

// same reports whether r is the range that passed, field by field.
func (p *passedLaunch) same(r *Range) bool {
	return p.nd.Global == r.Global && p.nd.Local == r.Local && p.nd.Dims == r.Dims && p.nlocal == r.nlocal &&
		p.nd.Offset == r.Offset && p.noffset == r.noffset
}

// checkLaunch checks r and the kernel's local memory against the limits of
// q's device, before the driver sees them: a work-group larger than the
// kernel allows, other than its reqd_work_group_size, or more local memory
// than the device has, is an error wrapping ErrInvalidArgument that gives
// the limits.
func (k *Kernel) checkLaunch(q *Queue, r Range) error {
	d := q.dev
	info, err := k.workGroup(d)
	if err != nil {
		return err
	}
	if err := k.checkRequired(d, r, info.CompileWorkGroupSize); err != nil {
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

// checkRequired checks r against the work-group size that the kernel's
// reqd_work_group_size attribute demands (req; zeros for none): a range
// without that local size fails here, naming it, rather than in the
// driver as CL_INVALID_WORK_GROUP_SIZE.
func (k *Kernel) checkRequired(d *Device, r Range, req [3]int) error {
	if req == [3]int{} {
		return nil
	}
	want := make([]string, r.Dims)
	match := r.hasLocal()
	for i := range 3 {
		if i < r.Dims {
			want[i] = strconv.Itoa(req[i])
			match = match && r.Local[i] == req[i]
		} else {
			match = match && req[i] == 1
		}
	}
	if match {
		return nil
	}
	size := fmt.Sprintf("%d×%d×%d", req[0], req[1], req[2])
	if !r.hasLocal() {
		return fmt.Errorf("%w: kernel %q requires work-groups of %s (its reqd_work_group_size) and range %v sets none: launch it over the range .WithLocal(%s)",
			ErrInvalidArgument, k.name, size, r, strings.Join(want, ", "))
	}
	return fmt.Errorf("%w: range %v: kernel %q requires work-groups of %s (its reqd_work_group_size) on %q",
		ErrInvalidArgument, r, k.name, size, d.Name)
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
