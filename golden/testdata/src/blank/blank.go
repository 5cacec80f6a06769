// Package blank marks a blank variable, which no code can name.
package blank

import "github.com/dgen-go/dgen/rt"

//dgen:global
var _ rt.DeviceGlobal[int32]

//dgen:alloc
var _dgenSite_X rt.AllocSite[float32]
