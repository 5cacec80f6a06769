// Command inproc measures rt against raw C in one process, in
// alternating blocks, two families of work:
//
//   - hotspot: Rodinia Hotspot's time loop six ways: raw C on the
//     backend's own API (the loop of bench/rawcl or bench/rawcu, on a
//     context of its own); the same C step called from Go once per launch
//     (cgo); Go straight on the backend of rt/driver, without rt (floor);
//     and rt's generated Step.Enqueue with two buffers swapped (swap), with
//     each step's output from a //dgen:alloc site (tagged), and recorded
//     two steps at a time into a command graph that is replayed (graph),
//     as examples/stencil runs them;
//   - rw4: 4 bytes written and read back, each copy waited for: in C, in
//     C called from Go once per pair (cgo), and as a DeviceGlobal's Write
//     and Read (global);
//   - spec: a 256-item kernel launched back to back by its generated
//     Enqueue, with the context's specialization-constant value (plain),
//     with a value of its own (spec), and alternating between two values
//     of its own (spec-alt), each variant built and its instance parked:
//     what a per-launch value costs on the launch path (spec.go). Its
//     ratios are to plain, not to C.
//
// C and cgo share a context; floor and rt have one each. With "both", C,
// cgo, floor and rt's first context are on OpenCL, and rt runs its ways on
// CUDA too (cuda-swap, cuda-tagged, cuda-graph, cuda-global), timed
// against the same C loop on OpenCL: what issue 26 compares; the spec
// family runs on each backend (spec, spec-cuda).
//
//	inproc cuda|opencl|both SRC SIZE STEPS ROUNDS
//
// The C loop runs on the first GPU, or on the first CPU device where
// RAWCL_DEVICE=cpu; rt on the device DGEN_DEVICE selects.
//
// On NVIDIA's drivers a process runs its launches in a fast or a slow mode
// (5.0 or 6.5 µs a Hotspot step on OpenCL, on one H100 host), and the mode
// drifts within a process too: the C loop's time differs more between two
// processes than dgen's overhead. Two loops of the same process, run block
// by block, share the mode. So each round runs STEPS steps (or pairs) of
// each way of a family, in the family's order on even rounds and the
// reverse on odd ones, prints one JSON line per block, and the end prints
// the medians (min–max) of every way and of its per-round ratio to the
// family's first way, C (plain in the spec family):
//
//	{"round":3,"family":"hotspot","way":"swap","backend":"opencl","ns_per_step":5312.4}
//	hotspot swap        / C: 1.041 (1.002–1.097) over 30 rounds
//
// Ways that enqueue from Go (cgo, floor, swap, tagged) also record the
// host's time per step up to their queue's final wait (enq_ns_per_step,
// and a line "host" per way at the end): where it is close to
// ns_per_step the host is what the loop waits for, and where it is well
// below, the GPU. The Hotspot step sits near that edge on an H200, so a
// way's ratio to C is 1.00 while its host time stays under the GPU's, and
// grows with it above: which side a way falls on depends on how long the
// driver's own launch takes in that process (the cgo way's host time).
//
// INPROC_FAMILIES="spec,spec-cuda" (names, comma-separated) runs only
// those families.
//
// INPROC_PROBES=1 adds the probe family (probe.go): the per-call C way
// with a fixed amount of one kind of work after every launch, to price it.
//
// INPROC_PROFILE="hotspot swap" (a family and a way) runs that way alone,
// STEPS×ROUNDS steps, under the CPU profiler, into inproc-hotspot-swap.pprof.
// Linux delivers a thread's profiling signals at most at the kernel's tick
// rate (250 Hz on the GPU machine), whatever rate is asked for.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// stepper runs n time steps of Hotspot and returns the nanoseconds a step
// took, the queue drained at the end.
type stepper interface {
	steps(n int) (float64, error)
}

func main() {
	// rawcu makes its CUDA context current on the thread that opens it.
	runtime.LockOSThread()
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: inproc cuda|opencl|both SRC SIZE STEPS ROUNDS")
		os.Exit(2)
	}
	var n [3]int
	for i, a := range os.Args[3:] {
		v, err := strconv.Atoi(a)
		if err != nil || v < 1 {
			fmt.Fprintf(os.Stderr, "inproc: %q is not a positive count\n", a)
			os.Exit(2)
		}
		n[i] = v
	}
	if err := run(os.Args[1], os.Args[2], n[0], n[1], n[2]); err != nil {
		fmt.Fprintln(os.Stderr, "inproc:", err)
		os.Exit(1)
	}
}

func run(backend, path string, size, steps, rounds int) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	base := backend // the backend of C, floor and the first rt
	var c cWays
	switch backend {
	case "opencl", "both":
		base, c = "opencl", openCL(string(src), size)
	case "cuda":
		c = openCU(string(src), size)
	default:
		return fmt.Errorf("backend %q: want cuda, opencl or both", backend)
	}
	floor, err := openFloor(base, string(src), size)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	defer floor.release()
	g, err := openGrid(base, size)
	if err != nil {
		return err
	}
	defer g.close()
	graph := &graphLoop{g: g}
	defer graph.release()
	spec, err := specFamily("spec", g)
	if err != nil {
		return err
	}
	fams := []family{
		{"hotspot", []way{{"C", c.loop}, {"cgo", c.perCall}, {"floor", floor}, {"swap", swapLoop{g}}, {"tagged", taggedLoop{g}}, {"graph", graph}}},
		{"rw4", []way{{"C", c.rw}, {"cgo", c.rwPerCall}, {"global", globalRW{g.q}}}},
		spec,
	}
	if backend == "both" {
		cu, err := openGrid("cuda", size)
		if err != nil {
			return err
		}
		defer cu.close()
		cuGraph := &graphLoop{g: cu}
		defer cuGraph.release()
		fams[0].ways = append(fams[0].ways, way{"cuda-swap", swapLoop{cu}}, way{"cuda-tagged", taggedLoop{cu}}, way{"cuda-graph", cuGraph})
		fams[1].ways = append(fams[1].ways, way{"cuda-global", globalRW{cu.q}})
		cuSpec, err := specFamily("spec-cuda", cu)
		if err != nil {
			return err
		}
		fams = append(fams, cuSpec)
	}
	if os.Getenv("INPROC_PROBES") != "" {
		fams = append(fams, probes(c))
	}
	if names := os.Getenv("INPROC_FAMILIES"); names != "" {
		fams = slices.DeleteFunc(fams, func(f family) bool { return !slices.Contains(strings.Split(names, ","), f.name) })
		if len(fams) == 0 {
			return fmt.Errorf("INPROC_FAMILIES=%q names no family", names)
		}
	}
	if name := os.Getenv("INPROC_PROFILE"); name != "" {
		return profile(fams, name, steps*rounds)
	}
	for _, f := range fams {
		if err := f.run(backend, steps, rounds); err != nil {
			return err
		}
	}
	return nil
}

// profile runs only the way called name ("hotspot swap", ...) for n steps
// with the CPU profiler at 5 kHz, and writes the profile to
// inproc-NAME.pprof: INPROC_PROFILE="hotspot swap" inproc ...
func profile(fams []family, name string, n int) error {
	for _, f := range fams {
		for _, w := range f.ways {
			if f.name+" "+w.name != name {
				continue
			}
			if _, err := w.s.steps(n / 10); err != nil { // warm up
				return err
			}
			out, err := os.Create("inproc-" + strings.ReplaceAll(name, " ", "-") + ".pprof")
			if err != nil {
				return err
			}
			defer out.Close()
			runtime.SetCPUProfileRate(5000) // StartCPUProfile keeps it (and says so)
			if err := pprof.StartCPUProfile(out); err != nil {
				return err
			}
			ns, err := w.s.steps(n)
			pprof.StopCPUProfile()
			fmt.Printf("%s: %.0f ns/step over %d steps, profiled\n", name, ns, n)
			return err
		}
	}
	return fmt.Errorf("no way %q", name)
}

// cWays are the ways in C of a backend; plus returns the per-call way
// with x after every launch.
type cWays struct {
	loop, perCall, rw, rwPerCall stepper
	plus                         func(x extra) stepper
}

// A way is one way of running a family's loop.
type way struct {
	name string
	s    stepper
}

// A family is ways of running the same work, the first of them the one
// the others are compared with: C, or plain in the spec family.
type family struct {
	name string
	ways []way
}

// run warms every way up, runs the rounds and prints the figures.
func (f family) run(backend string, steps, rounds int) error {
	times := make([][]float64, len(f.ways))
	hosts := make([][]float64, len(f.ways))
	for _, w := range f.ways { // build, allocate, fill the caches
		if _, err := w.s.steps(steps); err != nil {
			return fmt.Errorf("%s %s: %w", f.name, w.name, err)
		}
	}
	out := json.NewEncoder(os.Stdout)
	for r := range rounds {
		for j := range f.ways {
			if r%2 == 1 {
				j = len(f.ways) - 1 - j
			}
			hostNS = 0
			ns, err := f.ways[j].s.steps(steps)
			if err != nil {
				return fmt.Errorf("%s %s: %w", f.name, f.ways[j].name, err)
			}
			times[j] = append(times[j], ns)
			if hostNS > 0 {
				hosts[j] = append(hosts[j], hostNS)
			}
			out.Encode(struct {
				Round   int     `json:"round"`
				Family  string  `json:"family"`
				Way     string  `json:"way"`
				Backend string  `json:"backend"`
				NS      float64 `json:"ns_per_step"`
				Host    float64 `json:"enq_ns_per_step,omitempty"`
			}{r, f.name, f.ways[j].name, backend, ns, hostNS})
		}
	}
	for j, w := range f.ways {
		fmt.Printf("%s %-11s %s ns/step\n", f.name, w.name, spread(times[j]))
		if len(hosts[j]) > 0 {
			fmt.Printf("%s %-11s host %s ns/step\n", f.name, w.name, spread(hosts[j]))
		}
		if j > 0 {
			ratio := make([]float64, rounds)
			for r := range ratio {
				ratio[r] = times[j][r] / times[0][r]
			}
			fmt.Printf("%s %-11s / %s: %s over %d rounds\n", f.name, w.name, f.ways[0].name, spread(ratio), rounds)
		}
	}
	return nil
}

// hostNS is the host's time per step of the block that ran last, up to
// its queue's final wait, for the ways that record it (enqueued); 0 for
// the others.
var hostNS float64

// enqueued records the host's time per step of a block of n steps since
// start, once the last step is enqueued.
func enqueued(start time.Time, n int) { hostNS = perStep(start, n) }

// perStep returns the nanoseconds per step of n steps since start.
func perStep(start time.Time, n int) float64 {
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// initialTemps returns the grid's values before the first step, those of
// rawcl's and rawcu's loops: 323 to 343.
func initialTemps(size int) []float32 {
	t := make([]float32, size*size)
	for i := range t {
		t[i] = 323 + float32(i%21)
	}
	return t
}

// spread formats the median of v and its range.
func spread(v []float64) string {
	s := slices.Sorted(slices.Values(v))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	f := "%.0f (%.0f–%.0f)"
	if m < 10 {
		f = "%.3f (%.3f–%.3f)"
	}
	return fmt.Sprintf(f, m, s[0], s[len(s)-1])
}
