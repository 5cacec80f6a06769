// Package buildtags declares a program for Linux and its kernel spec for
// Windows: the Windows build would have the spec but not the program.
package buildtags

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program
