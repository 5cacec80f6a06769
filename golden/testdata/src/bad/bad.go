// Package bad has one of each error.
package bad

import "github.com/dgen-go/dgen/rt"

//dgen:global device_image_scope
var Img rt.DeviceGlobal[float32]

//dgen:global
var Ptr rt.DeviceGlobal[*int32]

//dgen:global host_access=read
var RO rt.DeviceGlobal[int32]

//dgen:bogus
var X int

//dgen:global colour=red
var Y rt.DeviceGlobal[int32]

//dgen:program source=bad.cl
var P rt.Program

//dgen:program source=bad.cl
var Q rt.Program

//dgen:program source=missing.cl
var M rt.Program

//dgen:kernel program=P name=nope
type NoKernel struct{}

//dgen:kernel program=P name=k
type WrongCount struct {
	A rt.Buffer[float32]
}

//dgen:kernel program=P name=k
type WrongType struct {
	A rt.Buffer[int32]
	N float32
}

func f(q *rt.Queue) {
	//dgen:global
	var local rt.DeviceGlobal[int32]
	_ = local
	_ = RO.Write(q, 1)
	_ = RO.WriteBytes(q, 0, nil)
}
