// Package overlay is correct as saved; the overlay test shows the analyzer
// an unsaved buffer of overlay.go with a field of the wrong type.
package overlay

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program

//dgen:kernel program=P name=k
type K struct {
	A rt.Buffer[float32]
	N int32
}
