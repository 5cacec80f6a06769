// Package rt is dgen's runtime, as applications use it: contexts, queues,
// typed buffers, programs and kernels over a device backend, and the
// handles of the declarations that dgen generates code for (Program,
// DeviceGlobal[T], AllocSite[T], SpecConst[T]), which the generated code
// registers while its package's variables are initialized.
//
// rt holds policy only. The device mechanism lives behind the interfaces
// of rt/driver; the OpenCL backend in rt/opencl registers itself when
// imported, the way a database/sql driver does:
//
//	import (
//		"github.com/dgen-go/dgen/rt"
//		_ "github.com/dgen-go/dgen/rt/opencl"
//	)
//
//	ctx, err := rt.Open() // DGEN_DEVICE selects the device
//
// Generated code talks to rt through rt/codegen, which nothing else should
// import.
//
// Every failure is returned as an error that names the operation and its
// subject and wraps the device's own error ([*DeviceError]), so that callers
// can test it with errors.Is against the sentinels of this package
// ([ErrOutOfMemory], [ErrBuildFailed], [ErrStale], ...).
package rt
