// Command suite runs programs of Futhark's allocator table on dgen.
package main

import _ "github.com/dgen-go/dgen/rt/opencl"

func main() {}
