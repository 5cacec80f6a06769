package main

// #include "cside.h"
import "C"

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
)

// The launch loop's way "ring": what a binding would reach that takes the
// driver call off the goroutine's core. Each goroutine writes launch
// records (touch64's argument and geometry) into a ring in C memory, with
// no cgo call, and a thread of the ring's own (cside.c's ring_main) makes
// the driver calls on the floor's stream. It answers one question for
// issue 53: whether rt's Go-side work, which the driver's code evicts from
// the core between launches, can leave the launch loop's throughput
// untouched. Its window and the floor's also write the process's CPU time
// a launch to stderr ("# cpu"), which is what the ring's thread costs.

// rings are the submission rings, one per floor (cside.c's sc_ring).
var rings []*C.struct_sc_ring

// A ringProducer is a goroutine's end of a ring: it writes launch records
// and publishes them with one atomic store, and sleeps only when the ring
// is full, until the ring's thread has launched half of it.
type ringProducer struct {
	r          *C.struct_sc_ring
	tail, head uint32 // records written, and the last head seen
}

// word is a word of the ring that both ends use, for sync/atomic.
func (p *ringProducer) word(w *C.uint32_t) *uint32 { return (*uint32)(unsafe.Pointer(w)) }

// push publishes a launch of touch64 with argument arg, and wakes the
// ring's thread if it sleeps.
func (p *ringProducer) push(arg uint64) {
	if p.tail-p.head >= C.SC_RING {
		p.wait(p.tail - C.SC_RING/2)
	}
	rec := &p.r.recs[p.tail%C.SC_RING]
	rec.arg, rec.gx, rec.bx = C.ulonglong(arg), 1, 64
	p.tail++
	atomic.StoreUint32(p.word(&p.r.tail), p.tail)
	if atomic.LoadUint32(p.word(&p.r.sleeping)) != 0 {
		C.sc_ring_wake(p.r)
	}
}

// wait returns once the ring's thread has launched want records.
func (p *ringProducer) wait(want uint32) {
	for {
		p.head = atomic.LoadUint32(p.word(&p.r.head))
		if int32(p.head-want) >= 0 {
			return
		}
		atomic.StoreUint32(p.word(&p.r.want), want)
		h := atomic.LoadUint32(p.word(&p.r.head))
		if int32(h-want) < 0 {
			C.sc_ring_wait(p.r, C.uint32_t(h))
		}
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// ringLaunches is the launch loop through the submission rings.
func (s *goSide) ringLaunches(g int, d time.Duration) (result, error) {
	openFloors(g)
	for len(rings) < g {
		rings = append(rings, C.sc_ring_open(floors[len(rings)]))
	}
	c0 := cpuTime()
	res, err := s.window(g, d, func(i int, _ *rt.Queue) (work, error) {
		return func(deadline time.Time, lat []float64) (int64, []float64, error) {
			r := rings[i]
			p := &ringProducer{r: r}
			p.tail = atomic.LoadUint32(p.word(&r.tail))
			p.head = atomic.LoadUint32(p.word(&r.head))
			arg := uint64(C.sc_ring_arg(r))
			var n int64
			for time.Now().Before(deadline) {
				for range 64 {
					p.push(arg)
				}
				n += 64
			}
			p.wait(p.tail)
			if r.err != 0 {
				return n, lat, fmt.Errorf("ring launch: driver error %d", int(r.err))
			}
			if e := C.sc_floor_sync(floors[i]); e != 0 {
				return n, lat, fmt.Errorf("floor sync: driver error %d", int(e))
			}
			return n, lat, nil
		}, nil
	})
	cpuReport("ring", g, res, cpuTime()-c0)
	return res, err
}

// cpuReport writes the process's CPU time per launch of a window to stderr.
func cpuReport(way string, g int, r result, cpu time.Duration) {
	if n := r.total(); n > 0 {
		fmt.Fprintf(os.Stderr, "# cpu %s g=%d: %.2f µs a launch, %.2f CPUs busy\n", way, g,
			float64(cpu.Nanoseconds())/float64(n)/1e3, cpu.Seconds()/r.elapsed.Seconds())
	}
}
