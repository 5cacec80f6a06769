// Package badcl has a program whose OpenCL C source does not scan.
package badcl

import "github.com/dgen-go/dgen/rt"

//dgen:program source=broken.cl
var Broken rt.Program

//dgen:global
var G rt.DeviceGlobal[int32]
