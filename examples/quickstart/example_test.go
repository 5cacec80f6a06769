package main

import (
	"errors"
	"fmt"
	"log"

	"github.com/dgen-go/dgen/rt"
)

// Example launches the Saxpy kernel spec over four elements: y = 2x + y.
func Example() {
	ctx, err := rt.Open() // DGEN_DEVICE selects the device: a GPU if there is one, else PoCL
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	x, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Free()
	y, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		log.Fatal(err)
	}
	defer y.Free()
	if err := errors.Join(x.Write(q, []float32{1, 2, 3, 4}), y.Write(q, []float32{10, 20, 30, 40})); err != nil {
		log.Fatal(err)
	}
	// The first launch builds the program, or loads it from dgen's cache.
	if err := (&Saxpy{A: 2, X: x, Y: y, N: 4}).Enqueue(q, rt.Range1(4)); err != nil {
		log.Fatal(err)
	}
	got := make([]float32, 4)
	if err := y.Read(q, got); err != nil { // the queue is in order: after the kernel
		log.Fatal(err)
	}
	fmt.Println(got)
	// Output: [12 24 36 48]
}
