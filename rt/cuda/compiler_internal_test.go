//go:build cgo

package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
)

// vendors makes a vendors directory holding the given .icd files (name to
// content): real files, read by readICDs as the ICD loader reads them.
func vendors(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestMissingCompiler: for each way NVIDIA's OpenCL can be missing on a
// machine whose libcuda loads, the reason names the missing part. The ICD
// files are real, and so is loading their libraries; only the NVIDIA
// OpenCL GPUs listed (none here) are given.
func TestMissingCompiler(t *testing.T) {
	h100 := driver.DeviceInfo{Name: "NVIDIA H100 80GB HBM3", Type: driver.DeviceGPU}
	a100 := driver.DeviceInfo{Name: "NVIDIA A100-SXM4-40GB", Type: driver.DeviceGPU}
	tests := []struct {
		name  string
		files map[string]string
		gpus  []driver.DeviceInfo
		want  []string
	}{
		{"no ICD files", nil, nil,
			[]string{"no OpenCL ICD file registers NVIDIA's OpenCL", "has no .icd file", "create ", "/nvidia.icd holding libnvidia-opencl.so.1"}},
		{"PoCL's only", map[string]string{"pocl.icd": "libpocl.so.2"}, nil,
			[]string{"has only pocl.icd", "/nvidia.icd holding libnvidia-opencl.so.1"}},
		{"library missing", map[string]string{"pocl.icd": "libpocl.so.2", "nvidia.icd": "/nonexistent/libnvidia-opencl.so.1"}, nil,
			[]string{"/nvidia.icd names /nonexistent/libnvidia-opencl.so.1, which does not load", "No such file", "NVIDIA's OpenCL library (libnvidia-opencl.so.1, part of the driver) is missing"}},
		{"library loads, lists no GPU", map[string]string{"nvidia.icd": "libc.so.6"}, nil,
			[]string{"/nvidia.icd names libc.so.6, which loads, but no NVIDIA OpenCL platform lists a GPU"}},
		{"another GPU", map[string]string{"nvidia.icd": "libc.so.6"}, []driver.DeviceInfo{a100, a100},
			[]string{`NVIDIA's OpenCL lists no GPU named "NVIDIA H100 80GB HBM3" (it lists "NVIDIA A100-SXM4-40GB")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := vendors(t, tt.files)
			got := missingCompiler(h100.Name, dir, readICDs(dir, tryLoad), tt.gpus, nil)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("reason %q, want it to say %q", got, w)
				}
			}
		})
	}
	// The same GPU listed: a compiler, no reason.
	devs := []devInfo{{info: driver.DeviceInfo{Name: h100.Name}}}
	matchCompilers(devs, []driver.DeviceInfo{a100, h100}, func(string) string { t.Error("asked why"); return "" })
	if devs[0].compiler == nil || devs[0].compiler.Name != h100.Name || devs[0].compilerError() != nil {
		t.Errorf("matched %+v, error %v", devs[0].compiler, devs[0].compilerError())
	}
}

// withDevices makes devs the CUDA devices that libcuda lists, for the
// test: the one fake here, since a libcuda that loads and lists an NVIDIA
// GPU cannot be had on a machine without one.
func withDevices(t *testing.T, devs []devInfo) {
	listDevices()
	list, err := devices.list, devices.err
	devices.list, devices.err = devs, nil
	t.Cleanup(func() { devices.list, devices.err = list, err })
}

// TestOpenWithoutCompiler: on a machine whose libcuda lists an NVIDIA GPU
// that no OpenCL platform offers (this machine's real OpenCL, PoCL only,
// and real ICD files), DGEN_BACKEND=cuda fails Open with ErrNoCompiler,
// naming the GPU and the missing file and library; DGEN_BACKEND=auto runs
// OpenCL's devices, and where those do not include the device asked for,
// its error says why CUDA declined.
func TestOpenWithoutCompiler(t *testing.T) {
	if nv, err := nvidiaOpenCL(); err == nil && len(nv) > 0 {
		t.Skipf("NVIDIA's OpenCL lists %s here: the fake device would find its compiler (TestOpenWithoutCompilerReal covers such a machine)", nv[0].Name)
	}
	devs := []devInfo{{info: driver.DeviceInfo{Index: 0, Platform: platformName, Name: "NVIDIA H100 80GB HBM3", Type: driver.DeviceGPU, Vendor: "NVIDIA Corporation"}}}
	attachCompilers(devs, vendors(t, map[string]string{"pocl.icd": "libpocl.so.2"}))
	withDevices(t, devs)
	want := []string{`no NVIDIA OpenCL to compile for the device "NVIDIA H100 80GB HBM3": `, "/nvidia.icd holding libnvidia-opencl.so.1", "DGEN_BACKEND=opencl"}
	check := func(what string, err error) {
		t.Helper()
		t.Logf("%s: %v", what, err)
		if !errors.Is(err, ErrNoCompiler) || !errors.Is(err, ErrNoDriver) {
			t.Errorf("%s: %v, want an error wrapping ErrNoCompiler and ErrNoDriver", what, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", what, err, w)
			}
		}
	}

	_, err := rt.OpenConfig(rt.Config{Backend: "cuda"})
	check("backend cuda", err)
	cfg, err := rt.ConfigFromEnv(func(k string) string {
		return map[string]string{"DGEN_BACKEND": "cuda", "DGEN_DEVICE": "gpu"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.OpenConfig(cfg)
	check("DGEN_BACKEND=cuda DGEN_DEVICE=gpu", err)

	if (Backend{}).Auto() {
		t.Error("Auto() = true for a GPU without a compiler")
	}
	check("Declined", Backend{}.Declined())
	if got := driver.AutoBackends(); len(got) != 1 || got[0] != "opencl" {
		t.Errorf("AutoBackends() = %v, want [opencl]", got)
	}
	// auto falls back to OpenCL: the default selector and cpu open PoCL.
	for _, sel := range []string{"", "cpu"} {
		ctx, err := rt.OpenConfig(rt.Config{Backend: "auto", Device: sel})
		if err != nil {
			testenv.SkipWithoutDevice(t, err)
			t.Errorf("auto, device %q: %v", sel, err)
			continue
		}
		if p := ctx.Devices()[0].Platform; p == platformName {
			t.Errorf("auto, device %q: platform %q", sel, p)
		}
		ctx.Close()
	}
	// A GPU asked for: OpenCL has none, and the error says why CUDA's
	// was not used.
	_, err = rt.OpenConfig(rt.Config{Backend: "auto", Device: "gpu"})
	want = append(want, "backend cuda declined")
	check("auto, device gpu", err)
}

// TestOpenWithoutCompilerReal runs where libcuda loads (the GPU machine):
// a child process whose ICD loader reads a vendors directory without
// NVIDIA's file sees CUDA's real devices without a compiler, and Open
// says what is missing.
func TestOpenWithoutCompilerReal(t *testing.T) {
	if os.Getenv("DGEN_TEST_NO_ICD_CHILD") == "1" {
		if nv, err := nvidiaOpenCL(); err == nil && len(nv) > 0 {
			t.Skipf("this machine's OpenCL ICD loader lists NVIDIA's %s whatever OCL_ICD_VENDORS says: a machine without NVIDIA's OpenCL cannot be had here", nv[0].Name)
		}
		_, err := rt.OpenConfig(rt.Config{Backend: "cuda"})
		if !errors.Is(err, ErrNoCompiler) || !strings.Contains(err.Error(), "nvidia.icd holding libnvidia-opencl.so.1") {
			t.Fatalf("backend cuda without NVIDIA's ICD: %v", err)
		}
		t.Logf("backend cuda without NVIDIA's ICD: %v", err)
		return
	}
	if _, err := (Backend{}).Platforms(); err != nil {
		t.Skipf("libcuda does not load here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOpenWithoutCompilerReal$", "-test.v")
	cmd.Env = append(os.Environ(), "DGEN_TEST_NO_ICD_CHILD=1", "OCL_ICD_VENDORS="+vendors(t, map[string]string{"pocl.icd": "libpocl.so.2"}))
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
}
