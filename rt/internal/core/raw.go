package core

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/dgen-go/dgen/rt/internal/desc"
)

// What rt/raw calls. raw.Kernel is a *RawKernel (kernel.go) with the
// exported methods of this file, kernel.go, kernelinfo.go, sampler.go and
// workgroup.go; raw.Program wraps a *BuiltProgram. The functions below are
// raw's entry points into a context.

// BuiltProgram is a program built for every device of its context, as
// rt/raw's Program holds it.
type BuiltProgram = builtProgram

// Build compiles source with options for every device of c through the
// context's program cache, bounded by ctx.
func Build(ctx context.Context, c *Context, name, source, options string) (*BuiltProgram, error) {
	return c.buildContext(ctx, buildRequest{name: name, source: source, options: options})
}

// BuildGenerated builds the program that the generated handle p
// registered for every device of c, bounded by ctx.
func BuildGenerated(ctx context.Context, p *Program, c *Context) (*BuiltProgram, error) {
	return p.buildContext(ctx, c, nil)
}

// Load creates a program from binaries, one per device of c.
func Load(c *Context, name string, binaries [][]byte, options string) (*BuiltProgram, error) {
	return c.loadProgram(name, binaries, options)
}

// Name returns the kernel's name; "" for a nil kernel.
func (k *RawKernel) Name() string {
	if k == nil {
		return ""
	}
	return k.name
}

// SetBuffer sets argument i to the memory m, checked: rt/raw's SetBuffer
// with BufferMem of the caller's buffer.
func (k *RawKernel) SetBuffer(i int, m *Mem) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	return k.setBuffer(i, m)
}

// SetLocal sets argument i, a __local pointer, to size bytes, checked.
func (k *RawKernel) SetLocal(i int, size int) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	return k.setLocalArg(i, size)
}

// Launch enqueues k over r on q after wait, rt/raw's wait list, whose
// events conv converts (Waits), and returns its event. The trace's call
// site is the caller of rt/raw's Launch.
func Launch[E any](q *Queue, k *RawKernel, r Range, wait []E, conv func(E) *Event) (*Event, error) {
	var w WaitList
	return q.launch(k.object(), nil, &r, Waits(&w, wait, conv), launchCall{op: opLaunch})
}

// Submit is Launch without an event.
func Submit[E any](q *Queue, k *RawKernel, r Range, wait []E, conv func(E) *Event) error {
	var w WaitList
	_, err := q.launch(k.object(), nil, &r, Waits(&w, wait, conv), launchCall{op: opSubmit})
	return err
}

// DeviceOf returns the device of k's context whose Facade holds dev (rt's
// *Device, which rt/raw passes on); nil if none does, or k is nil.
func (k *RawKernel) DeviceOf(dev any) *Device {
	if k == nil || dev == nil {
		return nil
	}
	for _, d := range k.ctx.devices {
		if d.Facade.Load() == dev {
			return d
		}
	}
	return nil
}

// SetArg is rt/raw's SetArg, which documents it: argument i of k set to
// v, a value of a type that checkArgType passes, as SetScalar sets an
// instance's.
func SetArg[T any](k *RawKernel, i int, v T) error {
	if err := k.checkArgType(i, reflect.TypeFor[T]()); err != nil {
		return err
	}
	if size := unsafe.Sizeof(v); size <= 8 && unsafe.Alignof(v) <= 8 {
		k.setScalar(i, size, desc.ScalarBits(v))
	} else {
		setArgBytes(&k.kernelObject, i, v)
	}
	return nil
}

// setArgBytes is SetArg for a value of more than 8 bytes, checked: a
// function of its own, as setLarge is, so that only such a value escapes.
func setArgBytes[T any](k *kernelObject, i int, v T) {
	k.setBytes(i, unsafe.Pointer(&v), unsafe.Sizeof(v))
}

// checkArgType checks that argument i of k may be set to a value of type
// t: a number of fixed size, or an array or struct of them.
func (k *RawKernel) checkArgType(i int, t reflect.Type) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if t.Kind() > reflect.Complex128 || t.Kind() == reflect.Uintptr || t.Kind() == reflect.Int || t.Kind() == reflect.Uint {
		// Array, struct, or a type with no fixed device size.
		err := checkPlain(t)
		if err == nil && t.Kind() <= reflect.Complex128 {
			err = fmt.Errorf("%w: %v has no fixed size on the device; use int32 or int64", ErrInvalidArgument, t)
		}
		if err == nil && t.Size() == 0 {
			// A zero-sized slot is one never set (checkSet).
			err = fmt.Errorf("%w: %v has no bytes", ErrInvalidArgument, t)
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
