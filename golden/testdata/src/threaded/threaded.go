// Package threaded uses device globals in a macro body and in a helper
// function of an included header: both are threaded into the image, which
// holds the header.
package threaded

import "github.com/dgen-go/dgen/rt"

//dgen:global
var Scale rt.DeviceGlobal[float32]

//dgen:global
var Offset rt.DeviceGlobal[int32]

//dgen:program source=t.cl options="-Iinc -DSTEP=2"
var T rt.Program

//dgen:kernel program=T name=apply
type Apply struct{ A rt.Buffer[float32] }

// Alt's kernel has two headers, one per #if branch, and one body.
//
//dgen:kernel program=T name=alt
type Alt struct{ A rt.Buffer[float32] }
