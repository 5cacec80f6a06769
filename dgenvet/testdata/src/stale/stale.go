// Package stale is correct but its generated file is out of date.
package stale // want `generated code is stale \(zz_generated.dgen.go: out of date\): run go generate`

import "github.com/dgen-go/dgen/rt"

//dgen:alloc
var Site rt.AllocSite[float32]
