// Package padding pads a Go struct with a blank field where C has a
// field, and declares a device global of absurd size.
package padding

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program

// Pair pads where C's struct pair has its field b.
type Pair struct {
	A float32
	_ float32
}

//dgen:kernel program=P name=k
type K struct {
	Ps rt.Buffer[Pair] // want `Go type Pair has 1 fields \(blank padding fields not counted\) but OpenCL C pair has 2`
}

//dgen:global
var Huge rt.DeviceGlobal[[1 << 40]byte] // want `device global Huge: \[1099511627776\]byte is 1099511627776 bytes; a device global holds at most 1073741824 bytes`
