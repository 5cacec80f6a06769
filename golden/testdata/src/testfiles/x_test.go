package testfiles_test

import (
	"github.com/dgen-go/dgen/golden/testdata/src/testfiles"
	"github.com/dgen-go/dgen/rt"
)

//dgen:alloc
var ExtSite rt.AllocSite[int32]

//dgen:alloc
var ExtPts rt.AllocSite[testfiles.Pt]
