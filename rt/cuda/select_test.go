package cuda_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/raw"
)

// cudaContext opens a context on the first CUDA device, or skips where
// libcuda does not load.
func cudaContext(t *testing.T) *rt.Context {
	t.Helper()
	if !(cuda.Backend{}).Auto() {
		t.Skip("no CUDA device with NVIDIA's OpenCL here")
	}
	ctx, err := rt.OpenConfig(rt.Config{Backend: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ctx
}

// TestOpenWithoutDriver: DGEN_BACKEND=cuda where libcuda does not load
// fails Open and says what is missing.
func TestOpenWithoutDriver(t *testing.T) {
	if _, err := (cuda.Backend{}).Platforms(); err == nil {
		t.Skip("libcuda loads here")
	}
	_, err := rt.OpenConfig(rt.Config{Backend: "cuda"})
	if !errors.Is(err, cuda.ErrNoDriver) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Fatalf("err = %v, want ErrNoDriver naming libcuda.so.1", err)
	}
	cfg, err := rt.ConfigFromEnv(func(k string) string {
		if k == "DGEN_BACKEND" {
			return "cuda"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.OpenConfig(cfg); !errors.Is(err, cuda.ErrNoDriver) {
		t.Fatalf("DGEN_BACKEND=cuda: err = %v, want ErrNoDriver", err)
	}
}

// TestAutoChooses: automatic selection takes CUDA for a GPU where it can
// and OpenCL otherwise; a CPU device is always OpenCL's. An empty
// Config.Backend is automatic selection whatever DGEN_BACKEND says.
func TestAutoChooses(t *testing.T) {
	t.Setenv("DGEN_BACKEND", "opencl") // OpenConfig reads no variable
	for _, backend := range []string{"", "auto", "AUTO"} {
		ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(backend), Device: "cpu"})
		if err != nil {
			testenv.SkipWithoutDevice(t, err)
			t.Fatalf("backend %q, cpu: %v", backend, err)
		}
		if p := ctx.Devices()[0].Platform; p == "CUDA driver API" {
			t.Errorf("backend %q, cpu: platform %q", backend, p)
		}
		ctx.Close()
	}
	if !(cuda.Backend{}).Auto() {
		if got := driver.AutoBackends(); len(got) != 1 || got[0] != "opencl" {
			t.Errorf("AutoBackends() = %v without libcuda, want [opencl]", got)
		}
		return
	}
	ctx, err := rt.OpenConfig(rt.Config{Device: "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	if p := ctx.Devices()[0].Platform; p != "CUDA driver API" {
		t.Errorf("auto on a GPU chose platform %q, want CUDA", p)
	}
}

// TestRefusedKernel: through rt, a program with a kernel that CUDA cannot
// run builds; that kernel is refused when it is made, with an error
// wrapping errors.ErrUnsupported that names the construct and says that
// the OpenCL backend runs it, and its sibling runs.
func TestRefusedKernel(t *testing.T) {
	ctx := cudaContext(t)
	src := `__kernel void w1b(__write_only image1d_buffer_t a, float4 v) { write_imagef(a, get_global_id(0), v); }
__kernel void plain(__global float *o) { o[get_global_id(0)] = 3.0f; }`
	p, err := raw.Build(ctx, "refused", src, "")
	if err != nil {
		t.Fatalf("a program with one kernel CUDA cannot run: %v", err)
	}
	defer p.Release()
	_, err = p.Kernel("w1b")
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	for _, w := range []string{"image1d_buffer_t", "DGEN_BACKEND=opencl"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to say %q", err, w)
		}
	}
	k, err := p.Kernel("plain")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	out, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := errors.Join(raw.SetBuffer(k, 0, out), raw.Submit(ctx.Queue(), k, rt.Range1(4))); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if err := out.Read(ctx.Queue(), got); err != nil || got[3] != 3 {
		t.Errorf("plain wrote %v (%v)", got, err)
	}
}

// TestTooMuchLocalMemory: a __local argument larger than the device's
// shared memory is an error, not a launch that fails on the device.
func TestTooMuchLocalMemory(t *testing.T) {
	ctx := cudaContext(t)
	p, err := raw.Build(ctx, "big", `__kernel void big(__global float* o, __local float* t) { t[get_local_id(0)] = 1; o[0] = t[0]; }`, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.Kernel("big")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := rt.NewBuffer[float32](ctx, 1)
	defer o.Free()
	raw.SetBuffer(k, 0, o)
	max := int(ctx.Devices()[0].LocalMemSize)
	if err := k.SetLocal(1, max+4); err == nil {
		if _, err = raw.Launch(ctx.Queue(), k, rt.Range1(32)); err == nil {
			t.Fatalf("a launch with %d bytes of local memory succeeded", max+4)
		}
	}
	// The most the device allows (above the 48 KiB default) works.
	if err := k.SetLocal(1, 100<<10); err != nil {
		t.Fatal(err)
	}
	ev, err := raw.Launch(ctx.Queue(), k, rt.Range1(32))
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.Wait(); err != nil {
		t.Fatal(err)
	}
	ev.Release()
}

// TestCorpusLoads loads into CUDA every PTX file under DGEN_PTX_CORPUS (NVIDIA
// OpenCL's binaries of the cl-corpus and the examples) after the rewrite,
// through the backend's driver contract, and reports how many programs and
// kernels load.
func TestCorpusLoads(t *testing.T) {
	dir := os.Getenv("DGEN_PTX_CORPUS")
	if dir == "" {
		t.Skip("DGEN_PTX_CORPUS not set")
	}
	if !(cuda.Backend{}).Auto() {
		t.Skip("no CUDA device with NVIDIA's OpenCL here")
	}
	plats, err := (cuda.Backend{}).Platforms()
	if err != nil || len(plats) == 0 || len(plats[0].Devices) == 0 {
		t.Fatalf("platforms: %v", err)
	}
	dc, err := (cuda.Backend{}).NewContext(plats[0].Devices[:1])
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Release()
	files, _ := filepath.Glob(filepath.Join(dir, "*.ptx"))
	loaded, kernels, refused := 0, 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := dc.LoadProgram([][]byte{b}, "")
		var ue *cuda.UnsupportedError
		switch {
		case errors.As(err, &ue):
			refused++
			t.Logf("%s: refused: %v", filepath.Base(f), err)
			continue
		case err != nil:
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		names, _ := p.KernelNames()
		for _, n := range names {
			k, err := p.NewKernel(n)
			if err != nil {
				t.Errorf("%s: kernel %s: %v", filepath.Base(f), n, err)
				continue
			}
			k.Release()
			kernels++
		}
		loaded++
		p.Release()
	}
	t.Logf("%d PTX files: %d loaded with %d kernels, %d refused", len(files), loaded, kernels, refused)
}
