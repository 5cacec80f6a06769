// Package names has device globals of two Go types named RGBA and of two
// instances of one generic type: each gets its own OpenCL C struct.
package names

import (
	"image/color"

	"github.com/dgen-go/dgen/rt"
)

// RGBA is this package's colour, of float components.
type RGBA struct{ R, G, B, A float32 }

// Pair is generic: Pair[int32] and Pair[float64] are different structs.
type Pair[T int32 | float64] struct{ A, B T }

//dgen:global
var Mine rt.DeviceGlobal[RGBA]

//dgen:global
var Theirs rt.DeviceGlobal[color.RGBA]

//dgen:global
var PI rt.DeviceGlobal[Pair[int32]]

//dgen:global
var PF rt.DeviceGlobal[Pair[float64]]

//dgen:program source=n.cl
var N rt.Program

//dgen:kernel program=N name=read
type Read struct{ Out rt.Buffer[float64] }
