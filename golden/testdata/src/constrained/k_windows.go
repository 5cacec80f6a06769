package constrained

import "github.com/dgen-go/dgen/rt"

// WinK is a kernel spec of windows only: its Enqueue sets its arguments
// however dgen runs.
//
//dgen:kernel program=PW name=k
type WinK struct {
	A rt.Buffer[float32] `dgen:"out"`
	N int32
}

//dgen:program source=k.cl
var PW rt.Program
