package rt_test

import (
	"fmt"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends"
)

// Open a context on the CPU device (PoCL, where no GPU is present), and
// move data to the device and back.
func Example() {
	ctx, err := rt.Open() // DGEN_DEVICE and DGEN_BACKEND select; a GPU if present, else PoCL
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	q := ctx.Queue()
	b, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Free()
	if err := b.Write(q, []float32{1, 2, 3, 4}); err != nil {
		fmt.Println(err)
		return
	}
	got := make([]float32, 4)
	if err := b.Read(q, got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)
	// Output: [1 2 3 4]
}

// A work-group size is given per dimension; a zero or a missing size is an
// error at launch, not the device's choice.
func ExampleRange_WithLocal() {
	fmt.Println(rt.Range2(64, 32).WithLocal(16, 8))
	fmt.Println(rt.Range1(100))
	// Output:
	// [64 32]/[16 8]
	// [100]
}
