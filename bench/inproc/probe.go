package main

import (
	"sync/atomic"
	"time"
)

// The probe family (INPROC_PROBES=1) prices, on the host the launches run
// on, the kinds of work that rt adds to a launch: each way is the cgo way
// (rawcl's step, one call from Go per launch) plus, after every call, a
// fixed amount of one kind of work. Its ratio to cgo, times the step, is
// what that work costs between two driver calls.

// extra is work done after each call of the per-call C step.
type extra func()

// perCallPlus is a per-call C way with extra work after every launch.
type perCallPlus struct {
	step func(i int) // one launch
	fin  func()      // wait for the launches
	x    extra
}

func (p perCallPlus) steps(n int) (float64, error) {
	start := time.Now()
	for i := range n {
		p.step(i)
		p.x()
	}
	p.fin()
	return perStep(start, n), nil
}

var (
	probeCounter atomic.Int64
	probeSink    int64
	probeLines   []int64 // 8 MiB, more than L2: made by probes
	probeNext    int     // the line lines read last
)

// probes returns the probe family over the C ways c.
func probes(c cWays) family {
	probeLines = make([]int64, 8<<20/8)
	return family{"probe", []way{{"C", c.loop}, {"cgo", c.perCall},
		{"+atomics", c.plus(atomics)}, {"+alu", c.plus(alu)}, {"+lines", c.plus(lines)}}}
}

// atomics does 8 locked read-modify-writes, as rt's enter, exit, lock and
// unlock of a launch do.
func atomics() {
	for range 8 {
		probeCounter.Add(1)
	}
}

// alu runs about 1,000 instructions on registers.
func alu() {
	x := probeSink
	for i := range 250 {
		x = x*31 + int64(i)
	}
	probeSink = x
}

// lines reads 64 cache lines, each one last read 2,048 calls ago and
// 4,099 lines (256 KiB) from the one before, so that no prefetcher
// guesses it: what a launch path that touches 64 lines of its own data
// pays when the driver's work has evicted them from L1 and L2.
func lines() {
	n := len(probeLines) / 8 // lines
	s := probeSink
	for range 64 {
		probeNext = (probeNext + 4099) % n
		s += probeLines[probeNext*8]
	}
	probeSink = s
}
