package driver

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoArgInfo reports that a program keeps no information on its
// kernels' arguments (OpenCL's CL_KERNEL_ARG_INFO_NOT_AVAILABLE): it was
// built without -cl-kernel-arg-info, or loaded from binaries.
var ErrNoArgInfo = errors.New("no kernel argument information")

// A KernelDescriber is a Kernel that describes itself beyond its
// work-group limits, as OpenCL's clGetKernelInfo, clGetKernelWorkGroupInfo
// and clGetKernelArgInfo do: what host code ported from OpenCL asks of a
// kernel. Backends implement it where they can.
type KernelDescriber interface {
	// CompileWorkGroupSize returns the work-group size that the kernel's
	// reqd_work_group_size attribute requires on the device whose
	// DeviceInfo.Handle is device (CL_KERNEL_COMPILE_WORK_GROUP_SIZE), all
	// zero when the kernel has none.
	CompileWorkGroupSize(device uintptr) ([3]int, error)
	// Attributes returns the attributes that the kernel's source declares
	// (CL_KERNEL_ATTRIBUTES), space-separated, "" for none.
	Attributes() (string, error)
	// ArgInfo returns what the program's source says of argument i. Where
	// the program keeps no such information, the error wraps ErrNoArgInfo.
	ArgInfo(i int) (ArgInfo, error)
}

// ArgInfo describes a kernel argument as its source declares it.
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
	AddressPrivate  AddressQualifier = iota // not a pointer, or __private
	AddressGlobal                           // __global
	AddressConstant                         // __constant
	AddressLocal                            // __local
)

func (a AddressQualifier) String() string {
	switch a {
	case AddressPrivate:
		return "private"
	case AddressGlobal:
		return "global"
	case AddressConstant:
		return "constant"
	case AddressLocal:
		return "local"
	}
	return fmt.Sprintf("AddressQualifier(%d)", int(a))
}

// AccessQualifier is the access qualifier of an image argument
// (CL_KERNEL_ARG_ACCESS_QUALIFIER).
type AccessQualifier uint8

// The access qualifiers.
const (
	AccessNone      AccessQualifier = iota // not an image
	AccessReadOnly                         // read_only
	AccessWriteOnly                        // write_only
	AccessReadWrite                        // read_write
)

func (a AccessQualifier) String() string {
	switch a {
	case AccessNone:
		return "none"
	case AccessReadOnly:
		return "read_only"
	case AccessWriteOnly:
		return "write_only"
	case AccessReadWrite:
		return "read_write"
	}
	return fmt.Sprintf("AccessQualifier(%d)", int(a))
}

// TypeQualifier is a set of type qualifiers of a kernel argument
// (CL_KERNEL_ARG_TYPE_QUALIFIER).
type TypeQualifier uint8

// The type qualifiers.
const (
	TypeConst TypeQualifier = 1 << iota
	TypeRestrict
	TypeVolatile
	TypePipe
)

// String returns the qualifiers as OpenCL C spells them, "const restrict",
// or "" for none.
func (t TypeQualifier) String() string {
	var s []string
	for _, q := range []struct {
		bit  TypeQualifier
		name string
	}{{TypeConst, "const"}, {TypeRestrict, "restrict"}, {TypeVolatile, "volatile"}, {TypePipe, "pipe"}} {
		if t&q.bit != 0 {
			s = append(s, q.name)
		}
	}
	return strings.Join(s, " ")
}
