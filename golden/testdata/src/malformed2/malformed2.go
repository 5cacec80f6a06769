// Package malformed2 holds more mistakes that nobody wrote into dgen's
// tests before.
package malformed2

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program

// A bool buffer: OpenCL C gives bool no size a host can share.
//
//dgen:kernel program=P name=flags
type Flags struct{ F rt.Buffer[bool] }

// A complex number has no OpenCL C counterpart.
//
//dgen:global
var Z rt.DeviceGlobal[complex64]

// A struct holding a bool.
type Rec struct {
	On bool
	X  float32
}

//dgen:global
var R rt.DeviceGlobal[Rec]

// The kernel is named größe in the source; the spec says groesse.
//
//dgen:kernel program=P name=groesse
type Groesse struct{ A rt.Buffer[float32] }

// Two kernel specs in one declaration group, the directive on the group.
//
//dgen:kernel program=P name=flags
type (
	G1 struct{ F rt.Buffer[int32] }
	G2 struct{ F rt.Buffer[int32] }
)

//dgen:program source=line.cl
var Line rt.Program

//dgen:program source=k.cl options="-I"
var NoDir rt.Program

//dgen:program source=k.cl options="-D1X=2"
var BadName rt.Program

// A spec constant of type int, which has no fixed size on the device.
//
//dgen:specconst
var N rt.SpecConst[int]

// A kernel spec whose field is a pointer, not a buffer.
//
//dgen:kernel program=P name=flags
type Ptr struct{ F *int32 }

//dgen:program source=k.cl
var P rt.Program
