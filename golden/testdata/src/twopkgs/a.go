package a

import "github.com/dgen-go/dgen/rt"

//dgen:alloc
var S rt.AllocSite[float32]
