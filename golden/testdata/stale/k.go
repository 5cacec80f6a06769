// Command stale is the package that TestStaleGenerated generates, edits
// and builds: it launches K once and says whether the launch ran.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/opencl"

	"STALEPKG/elem"
)

//dgen:program source=k.cl
var Prog rt.Program

//dgen:kernel program=Prog name=k
type K struct {
	Out rt.Buffer[int32]
	N   int32
	F   float32
	Pts rt.Buffer[Pair]
}

// Pair is a buffer element of this package, whose guards the generated
// file holds.
type Pair struct {
	A, B int32
}

//dgen:global
var G rt.DeviceGlobal[elem.Pt]

//dgen:alloc
var site rt.AllocSite[int32]

//dgen:alloc
var pairs rt.AllocSite[Pair]

func main() {
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
		fmt.Println("no device:", err)
		os.Exit(2)
	}
	defer ctx.Close()
	q := ctx.Queue()
	out, err := site.Alloc(q, 1)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	ps, err := pairs.Alloc(q, 1)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	err = (&K{Out: out, N: 1, F: 2, Pts: ps}).Enqueue(q, rt.Range1(1))
	if errors.Is(err, rt.ErrStale) {
		fmt.Println("stale:", err)
		os.Exit(3)
	}
	if err == nil {
		err = q.Finish()
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ok")
}
