package main

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
)

// floorLoop is the Go floor of a launch: the loop straight on a backend of
// rt/driver, without rt, passing what rawcu's loop passes each launch (the
// step count and the swapped buffers) through driver.ArgLauncher. Beside C
// and rt's ways, it splits what a launch from Go costs into cgo and the
// backend, and rt.
type floorLoop struct {
	ctx  driver.Context
	q    driver.Queue
	l    driver.ArgLauncher
	prog driver.Program
	k    driver.Kernel
	bufs [3]driver.Buffer // power, temperature in, temperature out
	a    *driver.Args
	r    driver.NDRange
}

func openFloor(backend, src string, size int) (*floorLoop, error) {
	var b driver.Backend = opencl.Backend{}
	if backend == "cuda" {
		b = cuda.Backend{}
	}
	dev, err := firstGPU(b)
	if err != nil {
		return nil, err
	}
	f := &floorLoop{}
	if f.ctx, err = b.NewContext([]driver.DeviceInfo{dev}); err != nil {
		return nil, err
	}
	if err := f.open(src, size); err != nil {
		f.release()
		return nil, err
	}
	return f, nil
}

func (f *floorLoop) open(src string, size int) error {
	var err error
	if f.prog, err = f.ctx.BuildProgram(src, ""); err != nil {
		return err
	}
	if f.k, err = f.prog.NewKernel("hotspot"); err != nil {
		return err
	}
	if f.q, err = f.ctx.NewQueue(0, false); err != nil {
		return err
	}
	var ok bool
	if f.l, ok = f.q.(driver.ArgLauncher); !ok {
		return errors.New("the backend's queue is no driver.ArgLauncher")
	}
	host := initialTemps(size)
	for i := range f.bufs {
		if f.bufs[i], err = f.ctx.NewBuffer(int64(4 * len(host))); err != nil {
			return err
		}
		if _, err := f.q.WriteBuffer(f.bufs[i], true, 0, int64(4*len(host)), unsafe.Pointer(&host[0]), nil); err != nil {
			return err
		}
	}
	scalar := func(v uint64) driver.Arg { return driver.Arg{Kind: driver.ArgScalar, Size: 4, Bits: v, Changed: true} }
	f32 := func(v float32) driver.Arg { return scalar(uint64(*(*uint32)(unsafe.Pointer(&v)))) }
	buf := func(b driver.Buffer) driver.Arg {
		return driver.Arg{Kind: driver.ArgBuffer, Size: 8, Bits: b.(driver.NativeBuffer).Handle(), Changed: true}
	}
	f.a = &driver.Args{Slots: []driver.Arg{scalar(1), buf(f.bufs[0]), buf(f.bufs[1]), buf(f.bufs[2]),
		scalar(uint64(size)), scalar(uint64(size)), scalar(1), scalar(1),
		f32(1), f32(1), f32(1), f32(1), f32(0.001)}, Changed: 13}
	const block = 16
	n := (size + block - 3) / (block - 2) * block
	f.r = driver.NDRange{Dims: 2, Global: [3]int{n, n, 1}, Local: [3]int{block, block, 1}}
	return nil
}

func (f *floorLoop) steps(n int) (float64, error) {
	hs := [2]uint64{f.bufs[1].(driver.NativeBuffer).Handle(), f.bufs[2].(driver.NativeBuffer).Handle()}
	src := 0
	start := time.Now()
	for range n {
		f.a.Slots[2].Bits, f.a.Slots[2].Changed = hs[src], true
		f.a.Slots[3].Bits, f.a.Slots[3].Changed = hs[1-src], true
		f.a.Changed += 2
		if _, err := f.l.LaunchArgs(f.k, f.a, &f.r, nil, false); err != nil {
			return 0, err
		}
		src = 1 - src
	}
	enqueued(start, n)
	err := f.q.Finish()
	return perStep(start, n), err
}

// release releases what openFloor made.
func (f *floorLoop) release() {
	if f.k != nil {
		f.k.Release()
	}
	if f.prog != nil {
		f.prog.Release()
	}
	for _, b := range f.bufs {
		if b != nil {
			b.Release()
		}
	}
	if f.q != nil {
		f.q.Release()
	}
	f.ctx.Release()
}

// firstGPU returns the first GPU the backend lists, else its first device.
func firstGPU(b driver.Backend) (driver.DeviceInfo, error) {
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
		return driver.DeviceInfo{}, errors.New("no device")
	}
	fmt.Fprintf(os.Stderr, "inproc: no GPU; the floor runs on %s\n", first.Label())
	return *first, nil
}
