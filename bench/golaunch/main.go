// Command golaunch is the Go floor of a launch: Rodinia Hotspot's time
// loop as rawcl and rawcu run it (the same kernel, geometry and arguments,
// two buffers swapped), driven through a backend of rt/driver directly,
// without rt. Beside rawcu (C) and stencil -alloc raw,swap (rt), it splits
// what a launch from Go costs into cgo and the backend, rt's raw path, and
// the generated Enqueue.
//
//	golaunch BACKEND SRC SIZE ITERS REPS
//
// prints one JSON line per timed repetition, as rawcu does:
// {"bench":"golaunch-BACKEND hotspot_SIZE_1","rep":R,"ns_per_op":NS}.
// BACKEND is cuda or opencl; the first GPU of the backend runs it.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
)

const block = 16

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: golaunch cuda|opencl SRC SIZE ITERS REPS")
		os.Exit(2)
	}
	size, _ := strconv.Atoi(os.Args[3])
	iters, _ := strconv.Atoi(os.Args[4])
	reps, _ := strconv.Atoi(os.Args[5])
	if err := run(os.Args[1], os.Args[2], size, iters, reps); err != nil {
		fmt.Fprintln(os.Stderr, "golaunch:", err)
		os.Exit(1)
	}
}

func backend(name string) (driver.Backend, error) {
	switch name {
	case "cuda":
		return cuda.Backend{}, nil
	case "opencl":
		return opencl.Backend{}, nil
	}
	return nil, fmt.Errorf("backend %q: want cuda or opencl", name)
}

// gpu returns the first GPU the backend lists, else its first device.
func gpu(b driver.Backend) (driver.DeviceInfo, error) {
	ps, err := b.Platforms()
	if err != nil {
		return driver.DeviceInfo{}, err
	}
	var first *driver.DeviceInfo
	for _, p := range ps {
		for i, d := range p.Devices {
			if d.Type == driver.DeviceGPU {
				return d, nil
			}
			if first == nil {
				first = &p.Devices[i]
			}
		}
	}
	if first == nil {
		return driver.DeviceInfo{}, fmt.Errorf("no device")
	}
	fmt.Fprintf(os.Stderr, "golaunch: no GPU; running on %s\n", first.Label())
	return *first, nil
}

func run(name, path string, size, iters, reps int) error {
	b, err := backend(name)
	if err != nil {
		return err
	}
	dev, err := gpu(b)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ctx, err := b.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		return err
	}
	defer ctx.Release()
	prog, err := ctx.BuildProgram(string(src), "")
	if err != nil {
		return err
	}
	defer prog.Release()
	k, err := prog.NewKernel("hotspot")
	if err != nil {
		return err
	}
	defer k.Release()
	q, err := ctx.NewQueue(0, false)
	if err != nil {
		return err
	}
	defer q.Release()
	l, ok := q.(driver.ArgLauncher)
	if !ok {
		return fmt.Errorf("the %s queue is no driver.ArgLauncher", name)
	}
	n := size * size
	host := make([]float32, n)
	for i := range host {
		host[i] = 323 + float32(i%21)
	}
	var bufs [3]driver.Buffer // power, temperature in, temperature out
	for i := range bufs {
		if bufs[i], err = ctx.NewBuffer(int64(4 * n)); err != nil {
			return err
		}
		defer bufs[i].Release()
		if _, err := q.WriteBuffer(bufs[i], true, 0, int64(4*n), unsafe.Pointer(&host[0]), nil); err != nil {
			return err
		}
	}
	handle := func(b driver.Buffer) uint64 { return b.(driver.NativeBuffer).Handle() }
	scalar := func(v uint64) driver.Arg { return driver.Arg{Kind: driver.ArgScalar, Size: 4, Bits: v, Changed: true} }
	f32 := func(v float32) driver.Arg { return scalar(uint64(*(*uint32)(unsafe.Pointer(&v)))) }
	buf := func(b driver.Buffer) driver.Arg {
		return driver.Arg{Kind: driver.ArgBuffer, Size: 8, Bits: handle(b), Changed: true}
	}
	a := &driver.Args{Slots: []driver.Arg{scalar(1), buf(bufs[0]), buf(bufs[1]), buf(bufs[2]),
		scalar(uint64(size)), scalar(uint64(size)), scalar(1), scalar(1),
		f32(1), f32(1), f32(1), f32(1), f32(0.001)}, Changed: 13}
	groups := (size + block - 3) / (block - 2)
	r := driver.NDRange{Dims: 2, Global: [3]int{groups * block, groups * block, 1}, Local: [3]int{block, block, 1}}
	hs := [2]uint64{handle(bufs[1]), handle(bufs[2])}
	for rep := -1; rep < reps; rep++ {
		src := 0
		start := time.Now()
		for s := 0; s < iters; s++ {
			// What rawcu's loop passes each launch: the step count (the
			// same) and the swapped buffers.
			a.Slots[2].Bits, a.Slots[2].Changed = hs[src], true
			a.Slots[3].Bits, a.Slots[3].Changed = hs[1-src], true
			a.Changed += 2
			if _, err := l.LaunchArgs(k, a, r, nil, false); err != nil {
				return err
			}
			src = 1 - src
		}
		if err := q.Finish(); err != nil {
			return err
		}
		if rep >= 0 {
			fmt.Printf("{\"bench\":\"golaunch-%s hotspot_%d_1\",\"rep\":%d,\"ns_per_op\":%.1f}\n",
				name, size, rep, float64(time.Since(start).Nanoseconds())/float64(iters))
		}
	}
	return nil
}
