package raw

import (
	"context"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// ErrNoArgInfo reports that a program keeps no information on its kernels'
// arguments: it was built without the option -cl-kernel-arg-info, or, on
// the CUDA backend, loaded from binaries.
var ErrNoArgInfo = driver.ErrNoArgInfo

// ArgInfo describes a kernel argument as its source declares it
// (clGetKernelArgInfo).
type ArgInfo struct {
	// Name is the parameter's name.
	Name string
	// TypeName is the parameter's type without its qualifiers: "float*",
	// "int", "image2d_t".
	TypeName string
	// Address is the address space that a pointer parameter points into.
	Address AddressQualifier
	// Access is an image parameter's access qualifier.
	Access AccessQualifier
	// Qualifiers are the type qualifiers of the parameter.
	Qualifiers TypeQualifier
}

// AddressQualifier is the address space of a kernel argument
// (CL_KERNEL_ARG_ADDRESS_QUALIFIER): where a pointer parameter points.
type AddressQualifier uint8

// The address qualifiers.
const (
	AddressPrivate  = AddressQualifier(driver.AddressPrivate)  // not a pointer, or __private
	AddressGlobal   = AddressQualifier(driver.AddressGlobal)   // __global
	AddressConstant = AddressQualifier(driver.AddressConstant) // __constant
	AddressLocal    = AddressQualifier(driver.AddressLocal)    // __local
)

// String returns the address space as OpenCL C spells it without its
// underscores: "private", "global", "constant" or "local".
func (a AddressQualifier) String() string { return driver.AddressQualifier(a).String() }

// AccessQualifier is the access qualifier of an image argument
// (CL_KERNEL_ARG_ACCESS_QUALIFIER).
type AccessQualifier uint8

// The access qualifiers.
const (
	AccessNone      = AccessQualifier(driver.AccessNone)      // not an image
	AccessReadOnly  = AccessQualifier(driver.AccessReadOnly)  // read_only
	AccessWriteOnly = AccessQualifier(driver.AccessWriteOnly) // write_only
	AccessReadWrite = AccessQualifier(driver.AccessReadWrite) // read_write
)

// String returns the qualifier as OpenCL C spells it, "read_only", or
// "none".
func (a AccessQualifier) String() string { return driver.AccessQualifier(a).String() }

// TypeQualifier is a set of type qualifiers of a kernel argument
// (CL_KERNEL_ARG_TYPE_QUALIFIER).
type TypeQualifier uint8

// The type qualifiers.
const (
	TypeConst    = TypeQualifier(driver.TypeConst)
	TypeRestrict = TypeQualifier(driver.TypeRestrict)
	TypeVolatile = TypeQualifier(driver.TypeVolatile)
	TypePipe     = TypeQualifier(driver.TypePipe)
)

// String returns the qualifiers as OpenCL C spells them, "const restrict",
// or "" for none.
func (t TypeQualifier) String() string { return driver.TypeQualifier(t).String() }

// BuildContext is Build bounded by ctx. The program cache builds a source
// once however many goroutines (and, through the persistent cache,
// processes) ask for it: BuildContext waits for that build only until ctx
// is done, then returns an error wrapping ctx.Err(), and the build goes on
// for the others who wait for it, into the cache. The driver's compile
// itself cannot be stopped.
func BuildContext(ctx context.Context, c *rt.Context, name, source, options string) (*Program, error) {
	p, err := core.Build(ctx, (*core.Context)(c), name, source, options)
	if err != nil {
		return nil, err
	}
	return &Program{p}, nil
}

// BuildGeneratedContext is BuildGenerated bounded by ctx, as BuildContext
// is (see also rt.Program.Build, and a kernel spec's generated
// EnqueueContext, which bounds the build of its first launch).
func BuildGeneratedContext(ctx context.Context, c *rt.Context, p *rt.Program) (*Program, error) {
	bp, err := core.BuildGenerated(ctx, (*core.Program)(p), (*core.Context)(c))
	if err != nil {
		return nil, err
	}
	return &Program{bp}, nil
}

// Load creates a program from binaries, one per device of c in order, as
// Program.Binaries returned them (clCreateProgramWithBinary), and builds
// it with options. Binaries the devices do not accept are an error
// wrapping driver.ErrInvalidBinary (package rt/driver; rt has no such
// sentinel of its own). A program loaded from binaries keeps no
// argument information on the CUDA backend.
func Load(c *rt.Context, name string, binaries [][]byte, options string) (*Program, error) {
	p, err := core.Load((*core.Context)(c), name, binaries, options)
	if err != nil {
		return nil, err
	}
	return &Program{p}, nil
}

// KernelNames lists the kernels that the program defines.
func (p *Program) KernelNames() ([]string, error) {
	if p == nil {
		return nil, nilProgram("kernels of program")
	}
	return p.p.KernelNames()
}

// Binaries returns the built program for each device of its context, in
// the order of rt.Context.Devices: what Load takes. On NVIDIA's OpenCL and
// on CUDA it is PTX.
func (p *Program) Binaries() ([][]byte, error) {
	if p == nil {
		return nil, nilProgram("binaries of program")
	}
	return p.p.Binaries()
}

// SetArgBytes sets argument i of k to the bytes of v: a by-value argument
// whose size is known only at run time, laid out as the kernel's parameter
// type is (in the device's byte order, which on every device dgen runs on
// is the host's). No bytes, or an index out of range, is an error.
func SetArgBytes(k *Kernel, i int, v []byte) error {
	return k.core().SetArgBytes(i, v)
}

// SetNullBuffer sets argument i, a __global or __constant pointer, to
// NULL, as clSetKernelArg with a NULL value does. A graph does not record
// a launch with a NULL argument (an error wrapping errors.ErrUnsupported).
func (k *Kernel) SetNullBuffer(i int) error { return k.core().SetNullBuffer(i) }

// NumArgs returns the number of arguments the kernel takes.
func (k *Kernel) NumArgs() int { return k.core().NumArgs() }

// CompileWorkGroupSize returns the work-group size that the kernel's
// reqd_work_group_size attribute requires on d, one of its context's
// devices, all zero when it has none (CL_KERNEL_COMPILE_WORK_GROUP_SIZE).
func (k *Kernel) CompileWorkGroupSize(d *rt.Device) ([3]int, error) {
	return k.core().CompileWorkGroupSize(k.core().DeviceOf(d))
}

// Attributes returns the attributes that the kernel's source declares,
// as OpenCL reports them (CL_KERNEL_ATTRIBUTES), "" for none; the CUDA
// backend knows none.
func (k *Kernel) Attributes() (string, error) { return k.core().Attributes() }

// ArgInfo returns what the kernel's source declares of argument i: its
// name, type name and qualifiers (clGetKernelArgInfo). OpenCL keeps them
// only for a program built from source with the option
// -cl-kernel-arg-info (PoCL and NVIDIA's OpenCL keep no names without it):
// otherwise the error wraps ErrNoArgInfo. A program built with that option
// skips the persistent cache, whose binaries lack the information.
func (k *Kernel) ArgInfo(i int) (ArgInfo, error) {
	a, err := k.core().ArgInfo(i)
	return ArgInfo{Name: a.Name, TypeName: a.TypeName, Address: AddressQualifier(a.Address), Access: AccessQualifier(a.Access), Qualifiers: TypeQualifier(a.Qualifiers)}, err
}
