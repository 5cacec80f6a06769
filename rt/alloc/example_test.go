package alloc_test

import (
	"fmt"

	"github.com/dgen-go/dgen/rt/alloc"
)

// hostDevice is a Device over host memory, standing in for rt's OpenCL
// device.
type hostDevice struct{ allocs int }

func (d *hostDevice) Alloc(size int64) (alloc.Block, error) {
	d.allocs++
	return make([]byte, size), nil
}
func (d *hostDevice) Release(alloc.Block) error { return nil }
func (d *hostDevice) MaxAlloc() int64           { return 1 << 30 }

// Host memory has one queue, the host's, so every use is complete.
func (d *hostDevice) Completed(alloc.Use) bool             { return true }
func (d *hostDevice) Order(alloc.Queue, []alloc.Use) error { return nil }

// A time loop that allocates its output every step, as Futhark's generated
// code and the Hotspot example do: after the first steps, every allocation is
// served from the tag's free block.
func Example() {
	dev := &hostDevice{}
	a, err := alloc.New(dev, alloc.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	const tempSite alloc.Tag = 1 // assigned by generated code
	in, _ := a.Alloc(tempSite, 4096)
	for step := 0; step < 360; step++ {
		out, err := a.Alloc(tempSite, 4096)
		if err != nil {
			fmt.Println(err)
			return
		}
		// ... enqueue the kernel reading in and writing out ...
		if err := in.Free(); err != nil {
			fmt.Println(err)
			return
		}
		in = out
	}
	s := a.Stats().Tag(tempSite)
	fmt.Printf("requests %d, reuses %d, driver allocations %d\n", s.Requests, s.Reuses, dev.allocs)
	fmt.Println(in.Free(), in.Free() != nil)
	// Output:
	// requests 361, reuses 359, driver allocations 2
	// <nil> true
}
