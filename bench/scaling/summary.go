package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// print writes, per workload and goroutine count, each way's medians over
// the rounds: its throughput ratio to C in the same round (min–max), and to
// the cgo floor where the workload has one, its
// throughput, request latencies, fairness and driver allocations.
func (s *summary) print(w io.Writer, counts []int) {
	for _, wl := range []string{"launch", "request", "serve"} {
		fmt.Fprintf(w, "\n%s loop\n\n| G | way | / C (min–max) | / floor (min–max) | per s | p50 µs | p99 µs | fewest–most / mean | driver allocs |\n|---|---|---|---|---|---|---|---|---|\n", wl)
		for _, g := range counts {
			for _, name := range []string{"C", "floor", "ring", "rt", "raw", "rt|floor", "raw|floor", "site", "alloc", "pool", "shared"} {
				bs := s.select_(wl, name, g)
				if len(bs) == 0 {
					continue
				}
				ratio, floor := "1", "–"
				if name != "C" && !strings.HasSuffix(name, "|floor") {
					ratio = s.ratio(wl, name, "C", g)
				} else if name != "C" {
					ratio = "–" // a paired way's throughput is of its own blocks
				}
				if name != "C" && name != "floor" {
					floor = s.ratio(wl, name, "floor", g)
				}
				var allocs uint64
				for _, b := range bs {
					allocs += b.Allocs
				}
				fmt.Fprintf(w, "| %d | %s | %s | %s | %.0f | %s | %s | %.2f–%.2f | %d |\n", g, name, ratio, floor,
					median(bs, func(b block) float64 { return b.PerSec }),
					opt(median(bs, func(b block) float64 { return b.P50 })), opt(median(bs, func(b block) float64 { return b.P99 })),
					median(bs, func(b block) float64 { return b.Fewest }), median(bs, func(b block) float64 { return b.Most }), allocs)
			}
		}
	}
}

func opt(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

// select_ returns the blocks of one way at g goroutines, by round.
func (s *summary) select_(wl, name string, g int) []block {
	var bs []block
	for _, b := range s.blocks {
		if b.Workload == wl && b.Way == name && b.G == g {
			bs = append(bs, b)
		}
	}
	return bs
}

// ratio returns the median (min–max) over rounds of way name's throughput
// over way ref's in the same round ("–" where ref did not run); a paired
// way's over the floor is over the floor's blocks in its own window.
func (s *summary) ratio(wl, name, ref string, g int) string {
	cs, ws := s.select_(wl, ref, g), s.select_(wl, name, g)
	var rs []float64
	for i := range min(len(cs), len(ws)) {
		rs = append(rs, ws[i].PerSec/cs[i].PerSec)
	}
	if ref == "floor" && len(ws) > 0 && ws[0].Floor > 0 { // a paired way: its own blocks of the floor
		rs = rs[:0]
		for _, b := range ws {
			rs = append(rs, b.PerSec/b.Floor)
		}
	}
	if len(rs) == 0 {
		return "–"
	}
	slices.Sort(rs)
	return fmt.Sprintf("%.3f (%.3f–%.3f)", rs[len(rs)/2], rs[0], rs[len(rs)-1])
}

func median(bs []block, f func(block) float64) float64 {
	vs := make([]float64, len(bs))
	for i, b := range bs {
		vs[i] = f(b)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}
