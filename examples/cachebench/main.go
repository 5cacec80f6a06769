// Command cachebench measures the program cache in fresh processes: for a
// real program (a Hotspot stencil step), the time until the program is
// ready (built or loaded) and until its first kernel has run, cold, from
// the persistent cache (warm disk) and from memory (warm memory), with the
// driver's own cache off and on. With -py it runs the same source through
// PyOpenCL (pyopencl_bench.py beside this file, or -pyscript) in the same
// run, with PyOpenCL's binary cache on (its cold run on fresh PyOpenCL and
// driver cache directories, its warm run on the same ones). With -runs N
// it repeats everything N times on fresh directories and adds the median
// and range of each figure. It prints one JSON document.
//
// Each figure comes from a child process (the command re-executes itself),
// so that nothing is warm in memory that the figure says is cold.
//
// With -fleet it measures the shared remote tier instead (fleet.go): it
// starts a redis-server (-redis-server) on a loopback port and reports
// program ready with an empty local cache and a warm remote against a warm
// local cache and a cold build, and -procs processes starting cold at once
// against the one Redis: builds per key and the slowest process's program
// ready time against one cold build.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends"   // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
	_ "github.com/dgen-go/dgen/rt/fleetcache" // the shared remote tier: the fleet benchmark sets DGEN_CACHE_REMOTE
	"github.com/dgen-go/dgen/rt/raw"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// source is the measured program: one step of Rodinia Hotspot, and a
// kernel that scales a vector, the one launched.
//
//go:embed hotspot.cl
var source string

// Hotspot is the measured program as dgen declares it.
//
//dgen:program source=hotspot.cl
var Hotspot rt.Program

// Scale multiplies the first N elements of X by A.
//
//dgen:kernel program=Hotspot name=scale
type Scale struct {
	X rt.Buffer[float32]
	A float32
	N int32
}

// Phase is the measurement of one child process.
type Phase struct {
	Variant        string  `json:"variant"`
	Phase          string  `json:"phase"` // cold, warm-disk, driver-only
	ProgramReadyMs float64 `json:"program_ready_ms"`
	FirstKernelMs  float64 `json:"first_kernel_done_ms"`
	WarmMemReadyUs float64 `json:"warm_memory_program_ready_us"`
	WarmMemKernUs  float64 `json:"warm_memory_kernel_done_us"`
	Builds         int64   `json:"builds"`
	DiskHits       int64   `json:"disk_hits"`
	RemoteHits     int64   `json:"remote_hits,omitempty"`
	RemoteErrors   int64   `json:"remote_errors,omitempty"`
	Device         string  `json:"device"`
	Error          string  `json:"error,omitempty"`
}

func main() {
	child := flag.Bool("child", false, "measure once and print one Phase (internal)")
	py := flag.Bool("py", false, "also run the same source through PyOpenCL")
	runs := flag.Int("runs", 1, "repeat everything `N` times on fresh cache directories")
	pyscript := flag.String("pyscript", "", "path of pyopencl_bench.py (default: beside the source or the binary)")
	flag.StringVar(&python, "python", "/usr/bin/python3", "the Python that has pyopencl (Debian python3-pyopencl)")
	fleet := flag.Bool("fleet", false, "measure the remote tier against a redis-server started here")
	redisServer := flag.String("redis-server", "redis-server", "-fleet: the redis-server program")
	procs := flag.Int("procs", 32, "-fleet: processes that start cold at once")
	flag.Parse()
	if *child {
		p := measure()
		json.NewEncoder(os.Stdout).Encode(p)
		return
	}
	if *fleet {
		if err := runFleet(*redisServer, *procs, max(1, *runs)); err != nil {
			fmt.Fprintln(os.Stderr, "cachebench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*py, *pyscript, max(1, *runs)); err != nil {
		fmt.Fprintln(os.Stderr, "cachebench:", err)
		os.Exit(1)
	}
}

func measure() Phase {
	var p Phase
	fail := func(err error) Phase { p.Error = err.Error(); return p }
	ctx, err := rt.Open()
	if err != nil {
		return fail(err)
	}
	defer ctx.Close()
	p.Device = ctx.Devices()[0].String()
	q := ctx.Queue()
	x, err := rt.NewBuffer[float32](ctx, 1024)
	if err != nil {
		return fail(err)
	}
	defer x.Free()
	launch := func() error {
		if err := (&Scale{X: x, A: 1.5, N: 1024}).Enqueue(q, rt.Range1(1024)); err != nil {
			return err
		}
		return q.Finish()
	}
	t0 := time.Now() // context opening is not part of the figures
	prog, err := raw.BuildGenerated(ctx, &Hotspot)
	if err != nil {
		return fail(err)
	}
	prog.Release()
	p.ProgramReadyMs = ms(time.Since(t0))
	if err := launch(); err != nil {
		return fail(err)
	}
	p.FirstKernelMs = ms(time.Since(t0))
	t1 := time.Now()
	if prog, err = raw.BuildGenerated(ctx, &Hotspot); err != nil {
		return fail(err)
	}
	prog.Release()
	p.WarmMemReadyUs = float64(time.Since(t1).Nanoseconds()) / 1e3
	t1 = time.Now()
	if err := launch(); err != nil {
		return fail(err)
	}
	p.WarmMemKernUs = float64(time.Since(t1).Nanoseconds()) / 1e3
	s := ctx.Stats().Cache
	p.Builds, p.DiskHits = s.Builds, s.DiskHits
	p.RemoteHits, p.RemoteErrors = s.Remote.Hits, s.Remote.Errors
	return p
}

var python string

// pyEnv returns env for a PyOpenCL run: without PYOPENCL_NO_CACHE and
// PYOPENCL_CTX, with PyOpenCL's cache and the drivers' caches (where env
// turns them on) under dir.
func pyEnv(env []string, dir string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PYOPENCL_NO_CACHE", "PYOPENCL_CTX", "PYOPENCL_CACHE_DIR":
			continue
		case "POCL_CACHE_DIR":
			kv = name + "=" + filepath.Join(dir, "pocl")
		case "CUDA_CACHE_PATH":
			kv = name + "=" + filepath.Join(dir, "nv")
		}
		out = append(out, kv)
	}
	return append(out, "PYOPENCL_CACHE_DIR="+filepath.Join(dir, "cache"))
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// Report is what cachebench prints.
type Report struct {
	Date     string           `json:"date"`
	GOOS     string           `json:"goos"`
	CPUs     int              `json:"cpus"`
	Runs     int              `json:"runs"`
	Phases   []Phase          `json:"dgen"`
	PyOpenCL []map[string]any `json:"pyopencl,omitempty"`
	// Medians holds, per "variant phase figure", the median and range of
	// the figure over the runs, such as "driver-cache-on warm-disk
	// program_ready_ms": "1.02 (0.95–1.30)".
	Medians map[string]string `json:"medians"`
}

func run(py bool, pyscript string, runs int) error {
	rep := Report{Date: time.Now().Format(time.DateOnly), GOOS: runtime.GOOS, CPUs: runtime.NumCPU(), Runs: runs}
	for range runs {
		if err := runOnce(&rep, py, pyscript); err != nil {
			return err
		}
	}
	rep.Medians = medians(&rep)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// medians returns the median and range of each figure over the runs.
func medians(rep *Report) map[string]string {
	vals := map[string][]float64{}
	for _, p := range rep.Phases {
		k := p.Variant + " " + p.Phase + " "
		vals[k+"program_ready_ms"] = append(vals[k+"program_ready_ms"], p.ProgramReadyMs)
		vals[k+"first_kernel_done_ms"] = append(vals[k+"first_kernel_done_ms"], p.FirstKernelMs)
	}
	for _, res := range rep.PyOpenCL {
		for _, phase := range []string{"cold", "warm"} {
			m, _ := res[phase].(map[string]any)
			for _, fig := range []string{"program_ready_ms", "first_kernel_done_ms"} {
				if v, ok := m[fig].(float64); ok {
					k := fmt.Sprintf("%v pyopencl-%s %s", res["variant"], phase, fig)
					vals[k] = append(vals[k], v)
				}
			}
		}
	}
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		slices.Sort(v)
		out[k] = fmt.Sprintf("%.3g (%.3g–%.3g)", v[len(v)/2], v[0], v[len(v)-1])
	}
	return out
}

// runOnce measures every variant and phase once, on fresh directories.
func runOnce(rep *Report, py bool, pyscript string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "cachebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	variants := []struct {
		name string
		env  func(dir string) []string
	}{
		{"driver-cache-off", func(string) []string { return []string{"POCL_KERNEL_CACHE=0", "CUDA_CACHE_DISABLE=1"} }},
		{"driver-cache-on", func(dir string) []string {
			return []string{"POCL_KERNEL_CACHE=1", "POCL_CACHE_DIR=" + filepath.Join(dir, "pocl"), "CUDA_CACHE_DISABLE=0", "CUDA_CACHE_PATH=" + filepath.Join(dir, "nv")}
		}},
	}
	for _, v := range variants {
		dir := filepath.Join(tmp, v.name)
		env := append(os.Environ(), "DGEN_CACHE_DIR="+filepath.Join(dir, "dgen"), "DGEN_CACHE_PERSISTENT=1")
		env = append(env, v.env(dir)...)
		// driver-only: dgen's persistent cache off, the driver's own cache
		// (if on) as warm as the earlier phases left it.
		for _, phase := range []string{"cold", "warm-disk", "driver-only"} {
			cmd := exec.Command(self, "-child")
			cmd.Env = env
			if phase == "driver-only" {
				cmd.Env = append(env[:len(env):len(env)], "DGEN_CACHE_PERSISTENT=0")
			}
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("%s %s: %w", v.name, phase, err)
			}
			var p Phase
			if err := json.Unmarshal(out, &p); err != nil {
				return fmt.Errorf("%s %s: %w: %q", v.name, phase, err, out)
			}
			p.Variant, p.Phase = v.name, phase
			rep.Phases = append(rep.Phases, p)
		}
		if py {
			res, err := runPy(pyscript, dir, v.env(dir))
			if err != nil {
				return err
			}
			res["variant"] = v.name
			rep.PyOpenCL = append(rep.PyOpenCL, res)
		}
	}
	return nil
}

// runPy times the same source through PyOpenCL with its binary cache on: a
// cold build with empty PyOpenCL and driver cache directories of its own,
// then a warm one in a fresh interpreter on the same directories. env is
// the variant's; PYOPENCL_NO_CACHE is removed, since PyOpenCL turns its
// cache off when the variable is present, whatever its value.
func runPy(script, dir string, env []string) (map[string]any, error) {
	if script == "" {
		for _, cand := range []string{"examples/cachebench/pyopencl_bench.py", "pyopencl_bench.py"} {
			if _, err := os.Stat(cand); err == nil {
				script = cand
				break
			}
		}
		if exe, err := os.Executable(); script == "" && err == nil {
			script = filepath.Join(filepath.Dir(exe), "pyopencl_bench.py")
		}
	}
	srcPath := filepath.Join(dir, "hotspot.cl")
	if err := os.WriteFile(srcPath, []byte(source), 0o644); err != nil {
		return nil, err
	}
	res := map[string]any{}
	for _, phase := range []string{"cold", "warm"} {
		cmd := exec.Command(python, script, srcPath)
		cmd.Env = pyEnv(append(os.Environ(), env...), filepath.Join(dir, "pyopencl"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("pyopencl %s: %w", phase, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &m); err != nil {
			return nil, fmt.Errorf("pyopencl %s: %w: %q", phase, err, out)
		}
		res[phase] = m
	}
	return res, nil
}
