// Package accepted holds declarations that dgen must accept: Go names
// that are not ASCII (which clang accepts in OpenCL C), structs padded
// with blank fields to C's layout, and kernels behind extension guards.
package accepted

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program

// Particle is padded with a blank field as C pads struct particle: its
// offsets and size are C's.
type Particle struct {
	M float32
	_ [3]float32
	V [4]float32
}

// Höhe is a device global whose name is not ASCII.
//
//dgen:global
var Höhe rt.DeviceGlobal[float32]

// Teilchen is a device global of a padded struct.
//
//dgen:global
var Teilchen rt.DeviceGlobal[Particle]

// Move has a field whose name is not ASCII.
//
//dgen:kernel program=P name=move
type Move struct {
	Ps    rt.Buffer[Particle]
	Größe rt.Buffer[int32]
}

// Half is declared only where the device has cl_khr_fp16.
//
//dgen:kernel program=P name=half_k
type Half struct {
	Out rt.Buffer[float32]
}

// Double is declared where the device has either extension for doubles.
//
//dgen:kernel program=P name=double_k
type Double struct {
	Out rt.Buffer[float32]
}
