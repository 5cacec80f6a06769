package testonly

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var T rt.Program

//dgen:global
var TestOnly rt.DeviceGlobal[float32]
