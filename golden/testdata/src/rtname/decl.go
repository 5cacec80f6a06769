// Package rtname declares a package-level rt, so the generated file must
// import the runtime under another name.
package rtname

import dg "github.com/dgen-go/dgen/rt"

//dgen:global
var G dg.DeviceGlobal[int32]

//dgen:program source=r.cl
var P dg.Program

//dgen:kernel program=P name=k
type K struct {
	X dg.Buffer[int32]
}
