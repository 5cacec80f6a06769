// Package testonly uses, from its own build, declarations of its tests.
package testonly

import "github.com/dgen-go/dgen/rt"

//dgen:kernel program=T name=k
type K struct {
	A rt.Buffer[float32]
}

//dgen:program source=main.cl
var M rt.Program

//dgen:program sorce=main.cl
var Misspelt rt.Program

//dgen:global
var Empty rt.DeviceGlobal[[0]float32]

type withEmpty struct {
	X int32
	E [0]int32
}

//dgen:global
var EmptyField rt.DeviceGlobal[withEmpty]

//dgen:program source=m2.cl
var M2 rt.Program
