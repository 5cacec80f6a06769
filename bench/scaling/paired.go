package main

// #include "cside.h"
import "C"

import (
	"fmt"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// The paired ways of the launch loop, "rt|floor" and "raw|floor": each
// goroutine alternates blocks of pairBlock launches through rt (the
// generated Enqueue, or rt/raw's Submit) with blocks as long through the
// cgo floor, each on its own queue or stream, and times every block. Their
// ratio is the floor's time per launch over rt's in the same window: what
// the separate ways measure, but with the two sides milliseconds apart
// instead of a window apart, so that the machine's drift (the floor's own
// throughput moves by 10–25% from one 200 ms window to the next on the
// H200's host) falls on both alike.
//
// rt's block ends with the queue's Flush, which returns once its launches
// are in the driver's hands: on CUDA a queue's back-to-back launches are
// made by a thread of rt's, which would otherwise make them while the
// floor's block is timed. So each of rt's blocks is a burst that starts
// with that thread asleep and ends with a wait for it; a block of 1024
// launches (4 ms at one goroutine) makes that 1% of it, and -pair 64
// measures short bursts.

// pairBlock is how many launches each side makes in a turn (-pair).
var pairBlock = 1024

// A launcher makes one launch of touch64 on its goroutine's queue; close
// releases what it holds.
type launcher struct {
	launch func() error
	close  func()
}

// rtLauncher launches through Touch's generated Enqueue on q.
func (s *goSide) rtLauncher(q *rt.Queue) (launcher, error) {
	p, err := s.touchBuffer(q)
	if err != nil {
		return launcher{}, err
	}
	spec, r := &Touch{P: p}, rt.Range1(64)
	return launcher{func() error { return spec.Enqueue(q, r) }, func() { p.Free() }}, nil
}

// rawLauncher launches through rt/raw's Submit on q.
func (s *goSide) rawLauncher(q *rt.Queue) (launcher, error) {
	k, p, err := s.rawTouch(q)
	if err != nil {
		return launcher{}, err
	}
	r := rt.Range1(64)
	return launcher{func() error { return raw.Submit(q, k, r) }, func() { k.Release(); p.Free() }}, nil
}

// paired returns the paired way of the launcher that mk makes.
func (s *goSide) paired(mk func(*goSide, *rt.Queue) (launcher, error)) func(g int, d time.Duration) (result, error) {
	return func(g int, d time.Duration) (result, error) {
		openFloors(g)
		var spent [2][]time.Duration // per goroutine: rt's blocks, the floor's
		spent[0], spent[1] = make([]time.Duration, g), make([]time.Duration, g)
		res, err := s.window(g, d, func(i int, q *rt.Queue) (work, error) {
			l, err := mk(s, q)
			if err != nil {
				return nil, err
			}
			return func(deadline time.Time, lat []float64) (int64, []float64, error) {
				defer l.close()
				f := floors[i]
				var n int64
				t := time.Now()
				for t.Before(deadline) {
					for range pairBlock {
						if err := l.launch(); err != nil {
							return n, lat, err
						}
					}
					if err := q.Flush(); err != nil {
						return n, lat, err
					}
					u := time.Now()
					for range pairBlock {
						if r := C.sc_floor_launch(f); r != 0 {
							return n, lat, fmt.Errorf("floor launch: driver error %d", int(r))
						}
					}
					v := time.Now()
					spent[0][i] += u.Sub(t)
					spent[1][i] += v.Sub(u)
					n += int64(pairBlock)
					t = v
				}
				if r := C.sc_floor_sync(f); r != 0 {
					return n, lat, fmt.Errorf("floor sync: driver error %d", int(r))
				}
				return n, lat, q.Finish()
			}, nil
		})
		var rtT, floorT time.Duration
		for i := range g {
			rtT += spent[0][i]
			floorT += spent[1][i]
		}
		if rtT > 0 && floorT > 0 {
			// Both sides made the same launches: each side's throughput is
			// the launches over its share of the window.
			n := float64(res.total())
			res.elapsed = rtT / time.Duration(g)
			res.pairPerSec = n / (floorT / time.Duration(g)).Seconds()
		}
		return res, err
	}
}
