// Package shared has two programs sharing a global and an image-scope one.
package shared

import "github.com/dgen-go/dgen/rt"

//dgen:global
var Shared rt.DeviceGlobal[uint32]

//dgen:global device_image_scope host_access=read
var Mine rt.DeviceGlobal[uint32]

//dgen:program source=a.cl
var A rt.Program

//dgen:program source=b.cl
var B rt.Program

//dgen:kernel program=A name=inc
type Inc struct{}

//dgen:kernel program=B name=get
type Get struct {
	Out rt.Buffer[uint32]
}
