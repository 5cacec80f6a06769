// Package wrongfield has a kernel spec field of the wrong type.
package wrongfield

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program

//dgen:kernel program=P name=k
type K struct {
	A rt.Buffer[float32] `dgen:"outt"` // want `unknown struct tag dgen:"outt"`
	N float32            // want `kernel spec K: field N has type float32 but parameter 1 \(int n\) of k needs int32`
}
