package malformed2_test

import "github.com/dgen-go/dgen/rt"

// A kernel spec of the external test package naming the package's
// program, which the generated code of this package cannot reach.
//
//dgen:kernel program=P name=flags
type External struct{ F rt.Buffer[int32] }
