package constrained

import "github.com/dgen-go/dgen/rt"

// G exists on windows only.
//
//dgen:global
var G rt.DeviceGlobal[int32]
