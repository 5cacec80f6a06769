// Package nearmiss has directives that dgen would not read.
package nearmiss

import "github.com/dgen-go/dgen/rt"

/* dgen:global */ // want `"/\* dgen:global \*/" is not a directive; write //dgen:global`
var G rt.DeviceGlobal[int32]

// dgen:specconst // want `"// dgen:specconst // want .*" is not a directive; write //dgen:specconst`
var S rt.SpecConst[uint8]
