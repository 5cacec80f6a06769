package silent

import "github.com/dgen-go/dgen/rt"

//dgen:global
var Twice rt.DeviceGlobal[int32]

//dgen:kernel program=P name=k
type WithEnqueue struct {
	A rt.Buffer[float32]
	B rt.Buffer[float32]
	N int32
}
