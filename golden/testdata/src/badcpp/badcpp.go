// Package badcpp has sources that preprocess to errors or to fewer kernels
// than a naive reading finds.
package badcpp

import "github.com/dgen-go/dgen/rt"

//dgen:global
var G rt.DeviceGlobal[float32]

//dgen:program source=e.cl options="-Iinc"
var E rt.Program

//dgen:program source=b.cl
var B rt.Program

//dgen:kernel program=B name=gone
type Gone struct{ A int32 }

//dgen:kernel program=B name=made
type Made struct{ A rt.Buffer[float32] }

//dgen:program source=b.cl options="-DUNTERMINATED=\"x"
var O rt.Program

// A source whose braces balance only after macro expansion cannot be
// rewritten for a global.
//
//dgen:program source=alt.cl
var A rt.Program
