package testfiles

import "github.com/dgen-go/dgen/rt"

//dgen:global
var InTest rt.DeviceGlobal[float32]
