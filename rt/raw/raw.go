// Package raw is rt's hand-written program and kernel API: build OpenCL C
// source at run time, create a kernel object, set its arguments one by one
// and launch it. It is the level below the kernel specs that dgen
// generates, as database/sql/driver is the level below database/sql.
//
// Most code should use the generated kernel specs (a //dgen:kernel
// struct's Enqueue), which check every argument's type at generate time,
// bind device globals and specialization constants, and keep their kernel
// objects in the context's cache; and package rt for everything else.
// Package raw is for the programs those cannot serve: kernel source known
// only at run time (a tool, a test, a port of existing OpenCL host code),
// and measurements of rt's lowest launch path against a raw C loop (the
// "raw" mode of examples/stencil). Its name says that: what it launches
// is what the caller set, unchecked against the kernel's declaration.
//
//	prog, err := raw.Build(ctx, "saxpy", src, "") // errors carry the build log
//	k, err := prog.Kernel("saxpy")
//	err = raw.SetArg(k, 0, float32(2))
//	err = raw.SetBuffer(k, 1, x) // x is an rt.Buffer
//	err = raw.Submit(q, k, rt.Range1(n)) // no event; raw.Launch returns one
//
// A Kernel is a kernel object of its own, with the launch record of the
// kernel instances that generated code holds (rt's internal core) and the
// methods of setting its arguments by hand. Its launches go through rt's
// launch path:
// they are traced, recorded into a command graph (rt.Queue.Record), count
// as uses of allocator memory, and are checked against the device's and
// the kernel's limits, as a generated Enqueue is. Errors wrap rt's
// sentinels (rt.ErrBuildFailed, rt.ErrNoKernel, rt.ErrOutOfRange, ...).
//
// # Porting OpenCL host code
//
// What a program written against OpenCL's C API asks of its programs and
// kernels maps onto this package and rt as follows:
//
//	clBuildProgram                              Build, BuildContext
//	clCreateProgramWithBinary                   Load
//	CL_PROGRAM_BINARIES                         Program.Binaries
//	CL_PROGRAM_KERNEL_NAMES                     Program.KernelNames
//	clSetKernelArg(k, i, size, &value)          SetArg; SetArgBytes where the size is known at run time
//	clSetKernelArg(k, i, sizeof(cl_mem), &mem)  SetBuffer
//	clSetKernelArg(k, i, sizeof(cl_mem), NULL)  Kernel.SetNullBuffer
//	clSetKernelArg(k, i, size, NULL)            Kernel.SetLocal
//	CL_KERNEL_NUM_ARGS                          Kernel.NumArgs
//	CL_KERNEL_COMPILE_WORK_GROUP_SIZE           Kernel.CompileWorkGroupSize
//	CL_KERNEL_ATTRIBUTES                        Kernel.Attributes
//	clGetKernelArgInfo                          Kernel.ArgInfo (build with -cl-kernel-arg-info)
//	clGetKernelWorkGroupInfo                    Kernel.WorkGroupInfo
//	clEnqueueNDRangeKernel's global offset      rt.Range.WithOffset (OpenCL backend only)
//	clWaitForEvents, clFinish                   rt.Event.WaitContext, rt.Queue.FinishContext
package raw

import (
	"context"
	"fmt"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// Program is a program built for every device of its context: the
// executable form of OpenCL C source. It is safe for concurrent use.
type Program struct {
	p *core.BuiltProgram
}

// Build compiles source with the build options for every device of c,
// through the context's program cache (memory, then disk, then the
// driver). name names the program in errors and traces. A compile error
// is returned wrapping rt.ErrBuildFailed, with the build log.
func Build(c *rt.Context, name, source, options string) (*Program, error) {
	return BuildContext(context.Background(), c, name, source, options)
}

// BuildGenerated returns the program that the //dgen:program declaration
// p registered, built for every device of c through the context's program
// cache, as the first launch of one of its kernel specs builds it: with
// its device globals and the context's values of its specialization
// constants. Building a program ahead of its first launch moves the build
// out of that launch.
func BuildGenerated(c *rt.Context, p *rt.Program) (*Program, error) {
	return BuildGeneratedContext(context.Background(), c, p)
}

// Name returns the program's name.
func (p *Program) Name() string {
	if p == nil {
		return ""
	}
	return p.p.Name()
}

// Kernel creates the kernel object called name, with no argument set. A
// name that the program does not define is an error wrapping
// rt.ErrNoKernel.
func (p *Program) Kernel(name string) (*Kernel, error) {
	if p == nil {
		return nil, nilProgram(fmt.Sprintf("create kernel %q", name))
	}
	k, err := p.p.Kernel(name)
	if err != nil {
		return nil, err
	}
	return (*Kernel)(k), nil
}

// Release releases the program. Kernels made from it stay usable.
// Releasing it again does nothing, nor does releasing it after its
// context's Close, which released it.
func (p *Program) Release() error {
	if p == nil {
		return nilProgram("release program")
	}
	return p.p.Release()
}

// nilProgram is the error of a method called on a nil *Program.
func nilProgram(op string) error {
	return fmt.Errorf("%s: %w: nil program", op, rt.ErrInvalidArgument)
}

// Kernel is a kernel object of a built program with its argument values,
// which the caller sets by hand. Setting arguments changes the Kernel, so one
// Kernel must not be set up by two goroutines at once; Launch and Submit
// capture the arguments, after which they may be changed again. A Kernel
// holds a prepared launch record: an argument set to the value it had at
// the last launch costs the driver nothing.
type Kernel core.RawKernel

// Name returns the kernel's name.
func (k *Kernel) Name() string { return k.core().Name() }

// Release releases the kernel object. Releasing it again does nothing,
// nor does releasing it after its context's Close, which released it.
func (k *Kernel) Release() error { return k.core().Release() }

// core returns k as the core's raw kernel.
func (k *Kernel) core() *core.RawKernel { return (*core.RawKernel)(k) }

// SetArg sets argument i of k to the value v: a number of fixed size
// (not int, uint or uintptr), or an array or struct of numbers laid out as
// the kernel's parameter type is. An index out of the kernel's range is an
// error wrapping rt.ErrOutOfRange, a value of no fixed device layout one
// wrapping rt.ErrInvalidArgument. The value is set as a generated kernel
// spec sets it: unchanged since the last launch, it costs the launch
// nothing.
func SetArg[T any](k *Kernel, i int, v T) error {
	return core.SetArg(k.core(), i, v)
}

// SetBuffer sets argument i of k to the buffer b, of any element type: a
// pointer to __global or __constant memory. A freed buffer is an error
// wrapping rt.ErrFreed, one of another context an error wrapping
// rt.ErrInvalidArgument, and the zero Buffer one wrapping
// rt.ErrInvalidArgument (a NULL pointer is SetNullBuffer's). It allocates
// nothing, so that a launch loop may set its buffers at every launch.
func SetBuffer[T any](k *Kernel, i int, b rt.Buffer[T]) error {
	return k.core().SetBuffer(i, core.BufferMem(core.Buffer[T](b)))
}

// SetLocal sets argument i, a __local pointer, to size bytes of local
// memory.
func (k *Kernel) SetLocal(i int, size int) error { return k.core().SetLocal(i, size) }

// SetImage sets argument i, an image parameter with the OpenCL C access
// qualifier access ("read_only", "write_only" or "read_write"), to img.
// An image whose ImageDesc.Access does not allow that use is an error
// wrapping rt.ErrInvalidArgument (a write_only image passed to a
// read_only parameter); so is the zero image. A read_write parameter on a
// device whose OpenCL C is older than 2.0 is an error wrapping
// errors.ErrUnsupported; a freed image one wrapping rt.ErrFreed, an image
// of another context one wrapping rt.ErrInvalidArgument. SetImage does
// not know the parameter's image type: an image of another kind is the
// caller's mistake here, where generated kernel specs check it.
func (k *Kernel) SetImage(i int, img rt.Image, access string) error {
	return k.core().SetImage(i, core.Image(img), access)
}

// SetSampler sets argument i, a sampler_t, to s.
func (k *Kernel) SetSampler(i int, s rt.Sampler) error {
	return k.core().SetSampler(i, core.Sampler{Normalized: s.Normalized, Address: core.AddressMode(s.Address), Filter: core.FilterMode(s.Filter)})
}

// WorkGroupInfo returns the kernel's work-group limits on d, one of its
// context's devices, asked of the driver once per device.
func (k *Kernel) WorkGroupInfo(d *rt.Device) (WorkGroupInfo, error) {
	info, err := k.core().WorkGroupInfo(k.core().DeviceOf(d))
	return WorkGroupInfo(info), err
}

// WorkGroupInfo is what a kernel may run on a device, as
// clGetKernelWorkGroupInfo says it.
type WorkGroupInfo struct {
	// WorkGroupSize is the largest work-group the kernel can run in on
	// the device (CL_KERNEL_WORK_GROUP_SIZE), at most the device's
	// MaxWorkGroupSize.
	WorkGroupSize int
	// PreferredMultiple is the work-group size multiple that performs best
	// (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE).
	PreferredMultiple int
	// LocalMemSize is the local memory the kernel uses, in bytes
	// (CL_KERNEL_LOCAL_MEM_SIZE): its __local variables, and its __local
	// arguments as set when it was asked.
	LocalMemSize int64
	// PrivateMemSize is the private memory each work-item uses, in bytes
	// (CL_KERNEL_PRIVATE_MEM_SIZE).
	PrivateMemSize int64
	// CompileWorkGroupSize is the work-group size that the kernel's
	// reqd_work_group_size attribute demands, or zeros where it has none
	// or the backend does not say (CL_KERNEL_COMPILE_WORK_GROUP_SIZE).
	CompileWorkGroupSize [3]int
}

// Launch enqueues kernel k over r on q after the events of wait and
// returns the launch's event. k's arguments must have been set; Launch
// captures them, so k may be changed once Launch returns. A buffer or
// image argument whose memory was freed since it was set is an error
// wrapping rt.ErrFreed, and nothing is enqueued.
func Launch(q *rt.Queue, k *Kernel, r rt.Range, wait ...*rt.Event) (*rt.Event, error) {
	e, err := core.Launch((*core.Queue)(q), k.core(), core.Range(r), wait, event)
	return (*rt.Event)(e), err
}

// Submit enqueues kernel k over r on q after the events of wait, like
// Launch, but creates no event: use it where the queue's order is all
// that is needed, since on some drivers an event costs as much as the
// launch.
func Submit(q *rt.Queue, k *Kernel, r rt.Range, wait ...*rt.Event) error {
	return core.Submit((*core.Queue)(q), k.core(), core.Range(r), wait, event)
}

// event returns e as the core's event.
func event(e *rt.Event) *core.Event { return (*core.Event)(e) }
