// Package malformed holds mistakes that used to generate and then fail in
// the device compiler, at run time, or silently: each must be a
// diagnostic at its place.
package malformed

import "github.com/dgen-go/dgen/rt"

// BS is also #defined in spec.cl: the kernel would see 8, whatever
// BS.Set says.
//
//dgen:specconst
var BS rt.SpecConst[int32]

// Scale is #defined in spec.cl too: the kernel would never read it.
//
//dgen:global
var Scale rt.DeviceGlobal[float32]

//dgen:program source=spec.cl
var Spec rt.Program

//dgen:program source=twice.cl
var Twice rt.Program

//dgen:program source=empty.cl
var Empty rt.Program

//dgen:kernel program=Empty name=k
type EmptyK struct{ A rt.Buffer[float32] }

//dgen:program source=spec.cl options="-cl-std=CL9.9"
var BadStd rt.Program

//dgen:program source=spec.cl options="-cl-mad-enable fast"
var NotOption rt.Program

//dgen:program source=spec.cl options="-DBS=4"
var OptionDefine rt.Program

//dgen:global
var Huge rt.DeviceGlobal[[1 << 40]byte]

var typeError int = "not an int"

//dgen:program source=prose.cl
var Prose rt.Program

//dgen:kernel program=Prose name=after
type After struct{ A rt.Buffer[float32] }

//dgen:program source=zero.cl
var Nul rt.Program

//dgen:program source=latin1.cl
var Latin1 rt.Program

//dgen:alloc
const C = 1

//dgen:kernel program=Spec
type NotStruct int

//dgen:program source=cycle.cl
var Cycle rt.Program

//dgen:program source=bomb.cl
var Bomb rt.Program

//dgen:program source=deep.cl
var Deep rt.Program

//dgen:program source=dir.cl
var IncludesDir rt.Program

//dgen:program source=helper.cl
var Helper rt.Program

//dgen:kernel program=Helper name=helper
type HelperK struct{ A rt.Buffer[float32] }
