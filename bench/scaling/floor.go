package main

// #cgo noescape sc_floor_launch
// #cgo nocallback sc_floor_launch
// #cgo noescape sc_noop
// #cgo nocallback sc_noop
// #include "cside.h"
import "C"

import (
	"fmt"
	"runtime"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// The launch loop's other ways beside C and the generated Enqueue:
//
//   - floor: the cgo floor, a goroutine that calls a C function once per
//     launch (cside.c's sc_floor_launch: cuCtxSetCurrent and
//     cuLaunchKernel, or clEnqueueNDRangeKernel, with arguments prepared
//     once, on a stream or queue of its own), as close to C as a Go
//     binding with one cgo call a launch can come; rt's own cost is what
//     it adds on top;
//   - raw: rt/raw's Submit of a kernel whose argument is set once, per
//     goroutine (a raw kernel is set up by one goroutine at a time).

// floors are the C side's floors, one per goroutine, kept for the whole
// run as the Go side keeps its queues.
var floors []C.uintptr_t

// openFloors opens floors until there are g.
func openFloors(g int) {
	for len(floors) < g {
		floors = append(floors, C.sc_floor_open())
	}
}

// floorCount returns how many launches floor i has run, once its stream
// (queue) is idle, or -1 on a driver error.
func floorCount(i int) int64 { return int64(C.sc_floor_count(floors[i])) }

// floorLaunches is the launch loop through the cgo floor.
func (s *goSide) floorLaunches(g int, d time.Duration) (res result, err error) {
	openFloors(g)
	c0 := cpuTime()
	defer func() { cpuReport("floor", g, res, cpuTime()-c0) }()
	return s.window(g, d, func(i int, _ *rt.Queue) (work, error) {
		f := floors[i] // a floor of its own
		return func(deadline time.Time, lat []float64) (int64, []float64, error) {
			var n int64
			for time.Now().Before(deadline) {
				for range 64 {
					if r := C.sc_floor_launch(f); r != 0 {
						return n, lat, fmt.Errorf("floor launch: driver error %d", int(r))
					}
				}
				n += 64
			}
			if r := C.sc_floor_sync(f); r != 0 {
				return n, lat, fmt.Errorf("floor sync: driver error %d", int(r))
			}
			return n, lat, nil
		}, nil
	})
}

// cgoNoop calls a C function that returns at once, as the floor calls
// sc_floor_launch: the cost of crossing into C and back.
func cgoNoop() int { return int(C.sc_noop(0)) }

// rawLaunches is the launch loop through rt/raw's Submit.
func (s *goSide) rawLaunches(g int, d time.Duration) (result, error) {
	return s.window(g, d, func(_ int, q *rt.Queue) (work, error) {
		k, p, err := s.rawTouch(q)
		if err != nil {
			return nil, err
		}
		r := rt.Range1(64)
		return func(deadline time.Time, lat []float64) (int64, []float64, error) {
			defer k.Release()
			defer p.Free()
			var n int64
			for time.Now().Before(deadline) {
				for range 64 {
					if err := raw.Submit(q, k, r); err != nil {
						return n, lat, err
					}
				}
				n += 64
			}
			return n, lat, q.Finish()
		}, nil
	})
}

// rawTouch returns a raw kernel of touch64, from the loop's program
// (built on first use), with its argument set to a new buffer of 64
// zeros written on q: one goroutine's, since a raw kernel is set up by
// one goroutine at a time. The caller releases both.
func (s *goSide) rawTouch(q *rt.Queue) (*raw.Kernel, rt.Buffer[int32], error) {
	if s.raw == nil {
		p, err := raw.Build(s.ctx, "scaling.cl", source, "")
		if err != nil {
			return nil, rt.Buffer[int32]{}, err
		}
		s.raw = p
	}
	k, err := s.raw.Kernel("touch64")
	if err != nil {
		return nil, rt.Buffer[int32]{}, err
	}
	p, err := s.touchBuffer(q)
	if err == nil {
		if err = raw.SetBuffer(k, 0, p); err != nil {
			p.Free()
		}
	}
	if err != nil {
		k.Release()
		return nil, rt.Buffer[int32]{}, err
	}
	return k, p, nil
}

// launchAllocs returns the Go heap allocations per launch of the
// generated Enqueue and of rt/raw's Submit on one queue, counted as
// testing.AllocsPerRun counts them (GOMAXPROCS 1, runtime.MemStats'
// Mallocs over n launches after one): the launch loop's promise of none,
// on the backend under test.
func (s *goSide) launchAllocs(n int) (gen, rawAllocs float64, err error) {
	qs, err := s.queues(1)
	if err != nil {
		return 0, 0, err
	}
	q := qs[0]
	p, err := rt.NewBuffer[int32](s.ctx, 64)
	if err != nil {
		return 0, 0, err
	}
	defer p.Free()
	if err := p.Write(q, make([]int32, 64)); err != nil {
		return 0, 0, err
	}
	if s.raw == nil {
		if s.raw, err = raw.Build(s.ctx, "scaling.cl", source, ""); err != nil {
			return 0, 0, err
		}
	}
	k, err := s.raw.Kernel("touch64")
	if err != nil {
		return 0, 0, err
	}
	defer k.Release()
	if err := raw.SetBuffer(k, 0, p); err != nil {
		return 0, 0, err
	}
	r, spec := rt.Range1(64), &Touch{P: p}
	count := func(launch func() error) (float64, error) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		if err := launch(); err != nil {
			return 0, err
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			if err := launch(); err != nil {
				return 0, err
			}
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / float64(n), q.Finish()
	}
	if gen, err = count(func() error { return spec.Enqueue(q, r) }); err != nil {
		return 0, 0, err
	}
	rawAllocs, err = count(func() error { return raw.Submit(q, k, r) })
	return gen, rawAllocs, err
}
