package goutf8

import "github.com/dgen-go/dgen/rt"

//dgen:program source=k.cl
var P rt.Program

var Größe = 1
