package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// What host code ported from OpenCL asks of rt/raw beyond the launch
// path: by-value arguments of a size known only at run time, NULL buffer
// arguments, and what a kernel says of itself (driver.KernelDescriber).

// SetArgBytes sets argument i of k to the bytes of v, a by-value argument
// whose size only the caller knows, laid out as the kernel's parameter
// type is.
func (k *RawKernel) SetArgBytes(i int, v []byte) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if len(v) == 0 {
		return fmt.Errorf("set argument %d of kernel %q: %w: no bytes (a __local argument is SetLocal's, a NULL buffer SetNullBuffer's)", i, k.name, ErrInvalidArgument)
	}
	if err := checkArgSize(len(v)); err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	if len(v) <= 8 {
		var b [8]byte
		copy(b[:], v)
		k.setScalar(i, uintptr(len(v)), binary.NativeEndian.Uint64(b[:]))
		return nil
	}
	k.setBytes(i, unsafe.Pointer(&v[0]), uintptr(len(v)))
	return nil
}

// SetNullBuffer sets argument i of k, a pointer to __global or __constant
// memory, to NULL.
func (k *RawKernel) SetNullBuffer(i int) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	s := &k.args.Slots[i]
	if s.Kind != driver.ArgBuffer || k.ids[i] != 0 || s.Bits != 0 || s.Size == 0 {
		*s = driver.Arg{Kind: driver.ArgBuffer, Size: uint32(unsafe.Sizeof(uintptr(0))), Changed: s.Changed}
		k.ids[i] = 0
		k.mark(i)
	}
	k.bind(i, nil)
	return nil
}

// argBuffer returns the driver buffer of argument i, a buffer argument:
// nil for NULL (SetNullBuffer).
func (k *kernelObject) argBuffer(i int) driver.Buffer {
	if i < len(k.bufs) && k.bufs[i] != nil {
		return k.bufs[i].drv
	}
	return nil
}

// recordable returns an error when a graph cannot record a launch of k
// over r: one with a global work offset or a NULL buffer argument, which
// graphs do not replay.
func (k *kernelObject) recordable(r Range) error {
	if r.Offset != [3]int{} {
		return fmt.Errorf("launch kernel %q over %v: %w: a graph records no global work offset", k.name, r, errors.ErrUnsupported)
	}
	for i := range k.args.Slots {
		if s := &k.args.Slots[i]; s.Kind == driver.ArgBuffer && k.argBuffer(i) == nil && s.Bits == 0 {
			return fmt.Errorf("launch kernel %q: argument %d: %w: a graph records no NULL buffer argument", k.name, i, errors.ErrUnsupported)
		}
	}
	return nil
}

// describer returns k's driver kernel as a driver.KernelDescriber, inside
// its context's enter (the caller exits), or an error wrapping
// errors.ErrUnsupported where the backend has none.
func (k *kernelObject) describer(op string) (driver.KernelDescriber, error) {
	if k == nil {
		return nil, nilKernel(op)
	}
	if k.released.Load() {
		return nil, fmt.Errorf("%s of kernel %q: %w", op, k.name, ErrClosed)
	}
	if err := k.ctx.enter(); err != nil {
		return nil, fmt.Errorf("%s of kernel %q: %w", op, k.name, err)
	}
	kd, ok := k.drv.(driver.KernelDescriber)
	if !ok {
		k.ctx.exit()
		return nil, fmt.Errorf("%s of kernel %q: %w by the backend", op, k.name, errors.ErrUnsupported)
	}
	return kd, nil
}

// CompileWorkGroupSize returns the work-group size that k's
// reqd_work_group_size attribute requires on d, all zero for none.
func (k *RawKernel) CompileWorkGroupSize(d *Device) ([3]int, error) {
	const op = "compile work-group size"
	kd, err := k.object().describer(op)
	if err != nil {
		return [3]int{}, err
	}
	defer k.ctx.exit()
	if d == nil || d.index >= len(k.ctx.devices) || k.ctx.devices[d.index] != d {
		return [3]int{}, fmt.Errorf("%s of kernel %q: %w: the device is not one of its context's (%s)", op, k.name, ErrInvalidArgument, k.ctx.deviceLabel())
	}
	wg, err := kd.CompileWorkGroupSize(d.info.Handle)
	if err != nil {
		return [3]int{}, fmt.Errorf("%s of kernel %q on %q: %w", op, k.name, d.Name, err)
	}
	return wg, nil
}

// Attributes returns the attributes that k's source declares.
func (k *RawKernel) Attributes() (string, error) {
	kd, err := k.object().describer("attributes")
	if err != nil {
		return "", err
	}
	defer k.ctx.exit()
	a, err := kd.Attributes()
	if err != nil {
		return "", fmt.Errorf("attributes of kernel %q: %w", k.name, err)
	}
	return a, nil
}

// ArgInfo returns what k's source declares of argument i. A program built
// without -cl-kernel-arg-info is an error wrapping driver.ErrNoArgInfo
// that names the option.
func (k *RawKernel) ArgInfo(i int) (driver.ArgInfo, error) { return k.object().argInfo(i) }

// argInfo is ArgInfo, for checkSet's errors too.
func (k *kernelObject) argInfo(i int) (driver.ArgInfo, error) {
	op := fmt.Sprintf("argument %d info", i)
	kd, err := k.describer(op)
	if err != nil {
		return driver.ArgInfo{}, err
	}
	defer k.ctx.exit()
	if i < 0 || i >= k.nargs {
		return driver.ArgInfo{}, fmt.Errorf("%s of kernel %q: %w: it takes %d arguments", op, k.name, ErrOutOfRange, k.nargs)
	}
	info, err := kd.ArgInfo(i)
	if errors.Is(err, driver.ErrNoArgInfo) {
		return driver.ArgInfo{}, fmt.Errorf("%s of kernel %q: %w: build the program from source with the option -cl-kernel-arg-info", op, k.name, err)
	}
	if err != nil {
		return driver.ArgInfo{}, fmt.Errorf("%s of kernel %q: %w", op, k.name, err)
	}
	return info, nil
}
