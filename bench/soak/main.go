// Command soak opens, uses and closes a context again and again, as a
// long-lived service that reconnects would, and reports what the process
// holds as it goes: resident memory, the Go heap, goroutines, open file
// descriptors and the GPU memory in use. Each cycle builds a small program
// from source, writes a 4 MiB buffer from pinned memory, makes 100
// launches, reads the buffer back and checks it, frees everything and
// closes the context.
//
//	soak -backend cuda|opencl|cpu [-cycles 1000] [-report 100,500,1000] [-free before|after|mixed]
//
// A line is printed at each reporting cycle, and one JSON object per line
// with -json. C's malloc statistics (glibc's mallinfo2) tell memory held
// from memory freed and kept: by default glibc raises its mmap threshold
// to the size of the first large block freed, and keeps multi-MiB blocks
// freed later in its arenas, so run the soak with
// GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 too. bench/soakcl is the same cycle written in C against OpenCL:
// the two side by side tell the driver's growth from dgen's.
// -memprofile writes a heap profile of the Go heap at the end.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// src is the program of every cycle: n steps of a multiply-add, so that
// 100 launches leave a value the host checks.
const src = `__kernel void soak_step(__global float* b, float a) {
	size_t i = get_global_id(0);
	b[i] = b[i] * 0.5f + a;
}`

const (
	elems    = 1 << 20 // 4 MiB of float32
	launches = 100
)

func main() {
	backend := flag.String("backend", "cpu", "cuda, opencl (a GPU through NVIDIA's OpenCL) or cpu (PoCL)")
	cycles := flag.Int("cycles", 1000, "open/use/close cycles")
	report := flag.String("report", "1,100,500,1000", "the cycles after which to report, comma-separated")
	free := flag.String("free", "before", "free everything before Close, after it, or mixed (after on odd cycles)")
	disk := flag.Bool("disk", false, "keep dgen's persistent program cache on (off: every cycle builds from source through the driver)")
	jsonOut := flag.Bool("json", false, "print one JSON object per report")
	memprofile := flag.String("memprofile", "", "write a heap profile to this file at the end")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 1 // every allocation: what a cycle leaves is a few objects
	}

	cfg := rt.Config{Backend: rt.BackendAuto, Device: "gpu"}
	switch *backend {
	case "cuda":
		cfg.Backend = rt.BackendCUDA
	case "opencl":
		cfg.Backend = rt.BackendOpenCL
	case "cpu":
		cfg.Backend, cfg.Device = rt.BackendOpenCL, "cpu"
	default:
		fail(fmt.Errorf("-backend %q: want cuda, opencl or cpu", *backend))
	}
	cc, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		fail(err)
	}
	if !*disk {
		cc.Cache.Disk.Persistent = false
	}
	cfg.Cache = cc.Cache
	at := map[int]bool{}
	for _, s := range strings.Split(*report, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fail(fmt.Errorf("-report %q: %v", *report, err))
		}
		at[n] = true
	}
	var first sample
	start := time.Now()
	for i := 1; i <= *cycles; i++ {
		after := *free == "after" || *free == "mixed" && i%2 == 1
		if err := cycle(cfg, after); err != nil {
			fail(fmt.Errorf("cycle %d: %w", i, err))
		}
		if !at[i] && i != *cycles {
			continue
		}
		s := measure(i, time.Since(start))
		if first.Cycle == 0 {
			first = s
		}
		if *jsonOut {
			s.Backend = *backend
			b, _ := json.Marshal(s)
			fmt.Println(string(b))
		} else {
			fmt.Printf("%s cycle %4d: RSS %7.1f MiB (%+.1f), Go heap %5.1f MiB, C malloc %6.1f MiB in use (%+.1f), %6.1f free, %6.1f mapped, %d arenas, goroutines %2d, fds %3d (%+d), GPU memory %s, %.0f s\n",
				*backend, s.Cycle, mib(s.RSS), mib(s.RSS-first.RSS), mib(s.HeapInuse), mib(s.MallocUsed), mib(s.MallocUsed-first.MallocUsed),
				mib(s.MallocFree), mib(s.MallocMap), s.Arenas, s.Goroutines, s.FDs, s.FDs-first.FDs, s.gpu(), s.Seconds)
		}
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			fail(err)
		}
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			fail(err)
		}
		f.Close()
	}
}

// cycle opens a context, uses it and closes it, freeing what it made
// before Close, or after it where freeAfter is set (Close releases it
// then, and the frees return nil).
func cycle(cfg rt.Config, freeAfter bool) error {
	ctx, err := rt.OpenConfig(cfg)
	if err != nil {
		return err
	}
	q := ctx.Queue()
	var frees []func() error
	run := func() error {
		prog, err := raw.Build(ctx, "soak", src, "")
		if err != nil {
			return err
		}
		frees = append(frees, prog.Release)
		k, err := prog.Kernel("soak_step")
		if err != nil {
			return err
		}
		frees = append(frees, k.Release)
		buf, err := rt.NewBuffer[float32](ctx, elems)
		if err != nil {
			return err
		}
		frees = append(frees, buf.Free)
		pin, err := rt.NewPinned[float32](q, elems)
		if err != nil {
			return err
		}
		frees = append(frees, pin.Free)
		host := pin.Slice()
		for i := range host {
			host[i] = float32(i % 1024)
		}
		ev, err := buf.WriteAsync(q, 0, pin)
		if err != nil {
			return err
		}
		frees = append(frees, ev.Release)
		if err := raw.SetBuffer(k, 0, buf); err != nil {
			return err
		}
		if err := raw.SetArg(k, 1, float32(1)); err != nil {
			return err
		}
		for range launches {
			if err := raw.Submit(q, k, rt.Range1(elems)); err != nil {
				return err
			}
		}
		rev, err := buf.ReadAsync(q, 0, pin)
		if err != nil {
			return err
		}
		frees = append(frees, rev.Release)
		if err := rev.Wait(); err != nil {
			return err
		}
		// x -> x/2 + 1, 100 times: 2 within float32's precision.
		if v := pin.Slice()[elems-1]; v < 1.999 || v > 2.001 {
			return fmt.Errorf("element %d after %d launches: %v, want 2", elems-1, launches, v)
		}
		return nil
	}
	err = run()
	if !freeAfter {
		err = errors.Join(err, q.Finish(), freeAll(frees))
	}
	err = errors.Join(err, ctx.Close())
	if freeAfter {
		err = errors.Join(err, freeAll(frees))
	}
	return err
}

// freeAll frees in the reverse order of allocation.
func freeAll(frees []func() error) error {
	var errs []error
	for i := len(frees) - 1; i >= 0; i-- {
		errs = append(errs, frees[i]())
	}
	return errors.Join(errs...)
}

// sample is what the process holds after a cycle.
type sample struct {
	Backend    string  `json:"backend,omitempty"`
	Cycle      int     `json:"cycle"`
	Seconds    float64 `json:"seconds"`
	RSS        int64   `json:"rss_bytes"`
	HeapInuse  int64   `json:"go_heap_inuse_bytes"`
	Goroutines int     `json:"goroutines"`
	FDs        int     `json:"fds"`
	MallocUsed int64   `json:"malloc_inuse_bytes"` // C malloc's, -1: unknown
	MallocFree int64   `json:"malloc_free_bytes"`  // freed and kept by C malloc
	MallocMap  int64   `json:"malloc_mmap_bytes"`  // mapped on their own
	Arenas     int     `json:"malloc_arenas"`      // glibc's arenas, -1: unknown
	GPUProcess int64   `json:"gpu_process_bytes"`  // -1: unknown
	GPUUsed    int64   `json:"gpu_used_bytes"`     // -1: unknown
	GPUTotal   int64   `json:"gpu_total_bytes"`    // -1: unknown
}

func (s sample) gpu() string {
	if s.GPUUsed < 0 {
		return "n/a (no nvidia-smi)"
	}
	proc := "n/a"
	if s.GPUProcess >= 0 {
		proc = fmt.Sprintf("%.0f MiB", mib(s.GPUProcess))
	}
	return fmt.Sprintf("%s this process, %.0f of %.0f MiB in use", proc, mib(s.GPUUsed), mib(s.GPUTotal))
}

// measure samples the process once the garbage collector has returned
// what it can to the system.
func measure(cycle int, elapsed time.Duration) sample {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := sample{Cycle: cycle, Seconds: elapsed.Seconds(), RSS: rss(), HeapInuse: int64(ms.HeapInuse),
		Goroutines: runtime.NumGoroutine(), FDs: fds()}
	s.MallocUsed, s.MallocFree, s.MallocMap = mallocStats()
	s.Arenas = mallocArenas()
	s.GPUProcess, s.GPUUsed, s.GPUTotal = gpuMemory()
	return s
}

// rss returns the resident memory of the process (Linux).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// fds returns the number of open file descriptors (Linux).
func fds() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// gpuMemory asks nvidia-smi for the GPU memory this process holds and the
// memory in use on the first GPU; -1 where it cannot tell.
func gpuMemory() (process, used, total int64) {
	process, used, total = -1, -1, -1
	out, err := exec.Command("nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return
	}
	if f := strings.Split(strings.SplitN(string(out), "\n", 2)[0], ","); len(f) == 2 {
		u, _ := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		t, _ := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
		used, total = u<<20, t<<20
	}
	out, err = exec.Command("nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return
	}
	pid := strconv.Itoa(os.Getpid())
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	process = 0 // listed by nobody: none
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) == 2 && strings.TrimSpace(f[0]) == pid {
			m, _ := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
			process += m << 20
		}
	}
	return
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "soak:", err)
	os.Exit(1)
}
