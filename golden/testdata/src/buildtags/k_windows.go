package buildtags

import "github.com/dgen-go/dgen/rt"

//dgen:kernel program=P name=k
type K struct{ A rt.Buffer[float32] }
