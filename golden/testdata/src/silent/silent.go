// Package silent has one of each mistake that dgen once let through.
package silent

import "github.com/dgen-go/dgen/rt"

//dgen:program source=silent.cl
var P rt.Program

//dgen:program source=../../../../etc/hostname
var Outside rt.Program

//dgen:kernel program=P name=k
type Generic[T any] struct {
	A rt.Buffer[float32]
	B rt.Buffer[float32]
	N int32
}

//dgen:kernel program=P name=k
type Blank struct {
	A rt.Buffer[float32]
	_ rt.Buffer[float32]
	N int32
}

//dgen:kernel program=P name=k
type Tags struct {
	A rt.Buffer[float32] `dgen:"out"`
	B rt.Buffer[float32] `dgen:"outt"`
	N int32              `dgen:"out,noalloc"`
}

//dgen:kernel program=P name=k
type Collide struct {
	A        rt.Buffer[float32]
	Out      rt.Buffer[float32] `dgen:"out"`
	AllocOut int32
}

//dgen:kernel program=P name=k
type WithEnqueue struct {
	A rt.Buffer[float32]
	B rt.Buffer[float32]
	N int32
}

// Enqueue is the user's own.
func (WithEnqueue) Enqueue() {}

// EnqueueEvent is the user's own.
func (*WithEnqueue) EnqueueEvent() {}

//dgen:kernel program=P name=v
type PtrBuf struct {
	P rt.Buffer[*int]
}

//dgen:alloc
var Strings rt.AllocSite[string]

// The group's doc is hidden by the spec's.
//
//dgen:global
var (
	// Hidden has its own doc.
	Hidden rt.DeviceGlobal[int32]
)

//dgen:global
var Twice rt.DeviceGlobal[int32]

//dgen:global
var float rt.DeviceGlobal[int32]

//dgen:specconst
var kernel rt.SpecConst[int32]

// dgen:global
var Spaced rt.DeviceGlobal[int32]

// Dgen:global
var Upper rt.DeviceGlobal[int32]

/*dgen:global*/
var Block rt.DeviceGlobal[int32]

//dgen:specconst default=300
var Narrow rt.SpecConst[uint8]

//dgen:specconst default=1.5
var Whole rt.SpecConst[int32]

//dgen:specconst default=1e39
var Huge rt.SpecConst[float32]

//dgen:specconst default=yes
var Word rt.SpecConst[int16]
