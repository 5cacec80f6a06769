//go:build linux && amd64

package buildtags

import "github.com/dgen-go/dgen/rt"

// L is under a constraint that implies the program's: fine.
//
//dgen:kernel program=P name=k
type L struct{ A rt.Buffer[float32] }
