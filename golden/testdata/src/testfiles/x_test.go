package testfiles_test

import "github.com/dgen-go/dgen/rt"

//dgen:alloc
var ExtSite rt.AllocSite[int32]
