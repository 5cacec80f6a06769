//go:build unix

package opencl

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

const scaleSource = `__kernel void scale(__global float *x, float a, int n) {
	int i = get_global_id(0);
	if (i < n)
		x[i] *= a;
}
`

// TestPoCLProcesses starts, in rounds, 8 processes at once that load the
// same program binary on PoCL with its kernel cache off and one cache
// directory between them, as a fleet of workers on one machine does
// (POCL_KERNEL_CACHE=0 and the default ~/.cache/pocl/kcache). PoCL 3.1
// then aborts some of them ("Final linking of kernel scale failed.",
// SIGABRT) unless each has a cache directory of its own. Every process
// must run the kernel and exit normally; the directories of the processes
// that exited are removed by the next one.
func TestPoCLProcesses(t *testing.T) {
	if bin := os.Getenv("DGEN_TEST_POCL_CHILD"); bin != "" {
		os.Exit(poclChild(bin))
	}
	if testing.Short() {
		t.Skip("starts 48 processes")
	}
	dev, ok := cpuDevice()
	if !ok {
		t.Skip("no CPU OpenCL device (PoCL)")
	}
	bin := filepath.Join(t.TempDir(), "scale.bin")
	if err := os.WriteFile(bin, buildBinary(t, dev), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	const procs, rounds = 8, 6
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, procs)
		outs := make([]bytes.Buffer, procs)
		for i := range procs {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPoCLProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), "DGEN_TEST_POCL_CHILD="+bin, "POCL_KERNEL_CACHE=0", "POCL_CACHE_DIR="+cacheDir)
			cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = cmd.Run() }()
		}
		wg.Wait()
		for i, err := range errs {
			if err == nil {
				continue
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					err = fmt.Errorf("killed by %v", ws.Signal())
				}
			}
			t.Errorf("round %d, process %d of %d: %v\n%s", round, i, procs, err, outs[i].String())
		}
		if t.Failed() {
			return
		}
	}
	countDirs := func() int {
		ents, _ := os.ReadDir(cacheDir)
		n := 0
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), poclDirPrefix) {
				n++
			}
		}
		return n
	}
	if n := countDirs(); n < 1 {
		t.Errorf("%d directories of dgen's in %s after %d processes; want one per process", n, cacheDir, procs*rounds)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPoCLProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DGEN_TEST_POCL_CHILD="+bin, "POCL_KERNEL_CACHE=0", "POCL_CACHE_DIR="+cacheDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("one more process: %v\n%s", err, out)
	}
	if n := countDirs(); n != 1 {
		t.Errorf("%d directories of dgen's in %s after one more process; want 1 (its own: those of processes that exited are removed)", n, cacheDir)
	}
}

// buildBinary builds scaleSource on dev and returns its binary.
func buildBinary(t *testing.T, dev driver.DeviceInfo) []byte {
	ctx, err := Backend{}.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	prog, err := ctx.BuildProgram(scaleSource, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	bins, err := prog.Binaries()
	if err != nil || len(bins) != 1 {
		t.Fatalf("binaries: %d, %v", len(bins), err)
	}
	return bins[0]
}

// poclChild is a process of TestPoCLProcesses: it loads the binary in
// file bin, runs scale on 1024 elements and checks them, and checks that
// POCL_CACHE_DIR is as it found it.
func poclChild(bin string) int {
	want := os.Getenv("POCL_CACHE_DIR")
	if err := runScale(bin); err != nil {
		fmt.Println(err)
		return 1
	}
	if got := os.Getenv("POCL_CACHE_DIR"); got != want {
		fmt.Printf("POCL_CACHE_DIR is %q after loading PoCL; want %q as it was\n", got, want)
		return 1
	}
	return 0
}

func runScale(bin string) error {
	b, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	dev, ok := cpuDevice()
	if !ok {
		return errors.New("no CPU device")
	}
	ctx, err := Backend{}.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		return err
	}
	defer ctx.Release()
	prog, err := ctx.LoadProgram([][]byte{b}, "")
	if err != nil {
		return err
	}
	defer prog.Release()
	k, err := prog.NewKernel("scale")
	if err != nil {
		return err
	}
	defer k.Release()
	q, err := ctx.NewQueue(0, false)
	if err != nil {
		return err
	}
	defer q.Release()
	const n = 1024
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	buf, err := ctx.NewBuffer(4 * n)
	if err != nil {
		return err
	}
	defer buf.Release()
	if _, err := q.WriteBuffer(buf, true, 0, 4*n, unsafePointer(xs), nil); err != nil {
		return err
	}
	if err := errors.Join(k.SetArgBuffer(0, buf), k.SetArgScalar(1, 4, uint64(math.Float32bits(2))), k.SetArgScalar(2, 4, n)); err != nil {
		return err
	}
	if err := q.SubmitKernel(k, driver.NDRange{Dims: 1, Global: [3]int{n}}, nil); err != nil {
		return err
	}
	got := make([]float32, n)
	if _, err := q.ReadBuffer(buf, true, 0, 4*n, unsafePointer(got), nil); err != nil {
		return err
	}
	for i := range got {
		if got[i] != 2*xs[i] {
			return fmt.Errorf("x[%d] = %v, want %v", i, got[i], 2*xs[i])
		}
	}
	return nil
}

func unsafePointer(s []float32) unsafe.Pointer { return unsafe.Pointer(&s[0]) }

// TestNoKernels: a program without kernels lists none and refuses
// NewKernel with ErrNoKernel, without asking the driver for its kernel
// names (which crashes NVIDIA's OpenCL).
func TestNoKernels(t *testing.T) {
	dev, ok := cpuDevice()
	if !ok {
		t.Skip("no CPU OpenCL device (PoCL)")
	}
	ctx, err := Backend{}.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	for _, tc := range []struct {
		src   string
		names []string
	}{
		{"int twice(int x) { return 2 * x; }\n", nil},
		{scaleSource, []string{"scale"}},
	} {
		prog, err := ctx.BuildProgram(tc.src, "")
		if err != nil {
			t.Fatal(err)
		}
		names, err := prog.KernelNames()
		if err != nil || !slices.Equal(names, tc.names) {
			t.Errorf("kernel names %q, %v; want %q", names, err, tc.names)
		}
		if _, err := prog.NewKernel("twice"); !errors.Is(err, driver.ErrNoKernel) {
			t.Errorf("NewKernel(twice): %v; want ErrNoKernel", err)
		}
		prog.Release()
	}
}

// TestIsolatePoCLLogs: where no PoCL cache directory of the process's own
// can be made, the warning is an slog record on slog.Default() with the
// directory and the error, not a line on stderr, and the environment is
// left alone.
func TestIsolatePoCLLogs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POCL_KERNEL_CACHE", "0")
	t.Setenv("POCL_CACHE_DIR", filepath.Join(file, "pocl"))
	var log bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	defer slog.SetDefault(old)
	isolatePoCL()()
	if out := log.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "base="+filepath.Join(file, "pocl")) || !strings.Contains(out, "err=") {
		t.Errorf("log %q, want one warning with the directory and the error", out)
	}
	if got := os.Getenv("POCL_CACHE_DIR"); got != filepath.Join(file, "pocl") {
		t.Errorf("POCL_CACHE_DIR = %q, changed", got)
	}
}

// The backend reads and sets PoCL's variables through what rt's table of
// variables installs (driver.InstallLibraryEnv); its own tests, which run
// without rt, install the process environment's.
func init() {
	driver.InstallLibraryEnv(os.Getenv, func(name, value string) func() {
		orig, had := os.LookupEnv(name)
		os.Setenv(name, value)
		return func() {
			if had {
				os.Setenv(name, orig)
			} else {
				os.Unsetenv(name)
			}
		}
	})
}
