//go:build cgo

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

var (
	_ driver.ArgLauncher      = (*queue)(nil)
	_ driver.KernelTimedQueue = (*queue)(nil)
	_ driver.NativeBuffer     = (*buffer)(nil)
)

// Handle returns the buffer's device pointer (a view's includes its
// offset): what a kernel argument holds.
func (b *buffer) Handle() uint64 { return uint64(b.ptr) }

// LaunchArgs copies the arguments that a marks changed into the kernel's
// argument slots, through the same checks as the Kernel setters, clears the
// marks and launches: cuLaunchKernel takes every argument with the launch,
// so the launch stays one cgo call. Unchanged arguments keep the values the
// slots already hold, since the record and the slots belong to one kernel
// object.
func (q *queue) LaunchArgs(dk driver.Kernel, a *driver.Args, r *driver.NDRange, wait []driver.Event, event bool) (driver.Event, error) {
	mode := noEvent
	if event {
		mode = withEvent
	}
	return q.launchArgs(dk, a, r, wait, mode)
}

// LaunchArgsTimed implements driver.KernelTimedQueue: on a kernel-timed
// queue, the kernel records no end event.
func (q *queue) LaunchArgsTimed(dk driver.Kernel, a *driver.Args, r *driver.NDRange, wait []driver.Event) (driver.Event, error) {
	return q.launchArgs(dk, a, r, wait, timesOnly)
}

func (q *queue) launchArgs(dk driver.Kernel, a *driver.Args, r *driver.NDRange, wait []driver.Event, mode eventMode) (driver.Event, error) {
	k, err := asKernel(dk)
	if err != nil {
		return nil, err
	}
	if a.Changed > 0 {
		if err := k.setArgs(a); err != nil {
			return nil, err
		}
	}
	return q.launchKernel(k, r, wait, mode)
}

// setArgs sets the changed arguments of a, clearing their marks.
func (k *kernel) setArgs(a *driver.Args) error {
	for i := range a.Slots {
		s := &a.Slots[i]
		if !s.Changed {
			continue
		}
		var err error
		switch {
		case s.Kind == driver.ArgLocal:
			err = k.SetArgLocal(i, uintptr(s.Size))
		case s.Kind == driver.ArgSampler:
			err = k.setSampler(i, sampler(s.Bits))
		case s.Kind == driver.ArgBuffer && k.entry.Params[i].Object != 0:
			err = k.setImageHandle(i, s.Bits)
		case s.Kind == driver.ArgBuffer:
			if err = k.check(i, 8, false); err == nil {
				*(*uint64)(k.slot(i)) = s.Bits
				k.mark(i)
			}
		case s.Size <= 8:
			err = k.SetArgScalar(i, uintptr(s.Size), s.Bits)
		default:
			if s.Bits+uint64(s.Size) > uint64(len(a.Bytes)) {
				return fmt.Errorf("set argument %d of kernel %s: %d bytes at %d of a record of %d", i, k.name, s.Size, s.Bits, len(a.Bytes))
			}
			err = k.SetArgBytes(i, uintptr(s.Size), unsafe.Pointer(&a.Bytes[s.Bits]))
		}
		if err != nil {
			return err
		}
		s.Changed = false
		a.Changed--
	}
	return nil
}
