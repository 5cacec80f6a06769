// Package tagmismatch uses, from a program every build has, a device
// global that only Linux builds declare.
package tagmismatch

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program
