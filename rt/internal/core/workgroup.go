package core

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
)

// kernelLimits are what a kernel object knows of its work-group limits: the
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
func (k *kernelObject) setLocal(i int, size int64) {
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

// WorkGroupInfo is rt/raw's Kernel.WorkGroupInfo: the limits are asked
// of the driver once per device.
func (k *RawKernel) WorkGroupInfo(d *Device) (driver.KernelWorkGroupInfo, error) {
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
func (k *kernelObject) workGroup(d *Device) (*wgInfo, error) {
	c := k.prog.ctx
	if d == nil || d.index >= len(c.devices) || c.devices[d.index] != d {
		return nil, fmt.Errorf("work-group info of kernel %q: %w: the device is not one of its context's (%s)", k.name, ErrInvalidArgument, c.deviceLabel())
	}
	if k.lim.wg == nil {
		// Set at creation; an object made otherwise has no cache.
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
func (k *kernelObject) askWorkGroup(d *Device) (*wgInfo, error) {
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

// checkRange checks *r, then the kernel's limits on q's device, and sets
// r's work-group size where the device needs rt to choose it (groups). A
// launch like the last one that passed (the same range and device, and
// the same local memory of arguments: setLocal forgets the last launch
// when that changes) passes again, with the same work-group size, without
// a check.
func (k *kernelObject) checkRange(q *Queue, r *Range) error {
	if ok := &k.passed; ok.dev == q.dev && ok.same(r) {
		r.Local = ok.nd.Local
		return nil
	}
	return k.checkNewRange(q, r)
}

// checkNewRange is checkRange for a launch unlike the last one that
// passed.
func (k *kernelObject) checkNewRange(q *Queue, r *Range) error {
	local := r.Local
	if err := r.check(); err != nil {
		return err
	}
	if err := k.checkLaunch(q, r); err != nil {
		return err
	}
	k.passed = passedLaunch{dev: q.dev, local: local, nd: r.ndrange()}
	return nil
}

// passedLaunch is the last launch of a kernel that checkRange passed.
type passedLaunch struct {
	dev   *Device // nil: none yet, or the local memory of arguments changed since
	local [3]int  // the range's Local as the launch gave it
	// nd is the range as the driver takes it, which the launch passes
	// (enqueue): a launch like the last converts nothing. Its Local is
	// the work-group size that checkRange chose where the device needs
	// one, else local.
	nd driver.NDRange
}

// same reports whether r is the range that passed, field by field.
func (p *passedLaunch) same(r *Range) bool {
	return p.nd.Global == r.Global && p.local == r.Local && p.nd.Dims == r.Dims && p.nd.Offset == r.Offset
}

// checkLaunch checks *r and the kernel's local memory against the limits
// of q's device, before the driver sees them: a work-group larger than the
// kernel or the device allows, other than its reqd_work_group_size, more
// work-groups than the device runs, or more local memory than the device
// has, is an error wrapping ErrInvalidArgument that gives the limits.
func (k *kernelObject) checkLaunch(q *Queue, r *Range) error {
	d := q.dev
	info, err := k.workGroup(d)
	if err != nil {
		return err
	}
	if err := k.checkRequired(d, *r, info.CompileWorkGroupSize); err != nil {
		return err
	}
	if r.hasLocal() {
		n := 1
		for i := range r.Dims {
			n *= r.Local[i]
		}
		if n > info.WorkGroupSize {
			return fmt.Errorf("%w: a work-group of %d work-items (range %v) is more than kernel %q allows on %q: %d (the device allows %d)",
				ErrInvalidArgument, n, *r, k.name, d.Name, info.WorkGroupSize, d.MaxWorkGroupSize)
		}
	}
	if err := d.groups(r, info.WorkGroupSize); err != nil {
		return err
	}
	if need := info.static + k.lim.localBytes; d.LocalMemSize > 0 && need > d.LocalMemSize {
		return fmt.Errorf("%w: kernel %q needs %d bytes of local memory (%d in __local arguments, %d of its own), %q has %d",
			ErrInvalidArgument, k.name, need, k.lim.localBytes, info.static, d.Name, d.LocalMemSize)
	}
	return nil
}

// groups checks r's work-groups against d's limits. r has passed check.
// Without a work-group size, the driver chooses one, as small as 1 where
// it finds nothing better: where that many work-groups could break a
// limit, groups chooses the size instead (pickLocal) and sets it in r,
// so that no launch reaches the driver with more work-groups than the
// device runs (on PoCL such a launch aborts the process). budget is the
// most work-items the kernel allows in a work-group.
func (d *Device) groups(r *Range, budget int) error {
	lim := &d.lim
	if !r.hasLocal() {
		if lim.fits(r.Dims, r.Global, [3]int{1, 1, 1}) == nil {
			return nil // whatever the driver chooses
		}
		local, err := pickLocal(r.Dims, r.Global, int64(budget), lim)
		if err != nil {
			return fmt.Errorf("range %v: %w: on %q %v; give a work-group size (WithLocal) or global sizes with larger divisors", *r, ErrInvalidArgument, d.Name, err)
		}
		r.Local = local
	}
	for i := range r.Dims {
		if m := lim.items[i]; m > 0 && int64(r.Local[i]) > m {
			return fmt.Errorf("range %v: %w: local size %d in dimension %d is more than %q allows there: %d", *r, ErrInvalidArgument, r.Local[i], i, d.Name, m)
		}
	}
	if err := lim.fits(r.Dims, r.Global, r.Local); err != nil {
		return fmt.Errorf("range %v: %w: on %q %v", *r, ErrInvalidArgument, d.Name, err)
	}
	return nil
}

// fits returns an error, naming the count and the limit, if global sizes
// in work-groups of local make more work-groups than lim allows in a
// dimension or in all. The local sizes divide the global ones.
func (lim *launchLimits) fits(dims int, global, local [3]int) error {
	var gs [3]int
	for i := range dims {
		gs[i] = global[i] / local[i]
		if m := lim.groups[i]; m > 0 && int64(gs[i]) > m {
			return fmt.Errorf("%d work-groups in dimension %d (global size %d, local size %d) are more than one launch may have there: %d", gs[i], i, global[i], local[i], m)
		}
	}
	if lim.total == 0 {
		return nil
	}
	n := int64(1)
	for _, g := range gs[:dims] {
		if n > lim.total/int64(g) {
			return fmt.Errorf("%s work-groups are more than one launch may have: %d", product(gs[:dims]), lim.total)
		}
		n *= int64(g)
	}
	return nil
}

// pickLocal chooses a work-group size, at most budget work-items, for
// global sizes that the driver could split into more work-groups than lim
// allows: first in each dimension the least size, among the divisors of
// its global size, that keeps its work-groups within the limit, then,
// first dimension first, the largest divisor that the budget leaves room
// for, up to 256 work-items in all unless more are needed. It returns an
// error where no divisor fits.
func pickLocal(dims int, global [3]int, budget int64, lim *launchLimits) ([3]int, error) {
	var local [3]int
	used := int64(1)
	for i := range dims {
		g := int64(global[i])
		most := min(g, budget/used)
		if m := lim.items[i]; m > 0 {
			most = min(most, m)
		}
		need := int64(1)
		if m := lim.groups[i]; m > 0 && g > m {
			need = g / m // rounded up, without overflowing
			if g%m != 0 {
				need++
			}
		}
		l := int64(0)
		for c := need; c <= most; c++ {
			if g%c == 0 {
				l = c
				break
			}
		}
		if l == 0 {
			return local, fmt.Errorf("no work-group size of at most %d work-items divides global size %d in dimension %d into at most %d work-groups", most, g, i, lim.groups[i])
		}
		local[i], used = int(l), used*l
	}
	grow := max(min(budget, 256), used)
	for i := range dims {
		g := int64(global[i])
		rest := used / int64(local[i])
		most := min(g, grow/rest)
		if m := lim.items[i]; m > 0 {
			most = min(most, m)
		}
		for c := most; c > int64(local[i]); c-- {
			if g%c == 0 {
				local[i] = int(c)
				break
			}
		}
		used = rest * int64(local[i])
	}
	return local, lim.fits(dims, global, local)
}

// checkRequired checks r against the work-group size that the kernel's
// reqd_work_group_size attribute demands (req; zeros for none): a range
// without that local size fails here, naming it, rather than in the
// driver as CL_INVALID_WORK_GROUP_SIZE.
func (k *kernelObject) checkRequired(d *Device, r Range, req [3]int) error {
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
