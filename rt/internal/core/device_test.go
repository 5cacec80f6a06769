package core

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

func TestRangeCheck(t *testing.T) {
	tests := []struct {
		r    Range
		want string // "" for no error, else a part of its text
	}{
		{Range1(10), ""},
		{Range2(16, 16).WithLocal(16, 16), ""},
		{Range3(4, 4, 4).WithLocal(2, 2, 2), ""},
		{Range1(0), "global size 0 in dimension 0"},
		{Range2(32, 32).WithLocal(8), "range [32 32]/[8 _]: invalid argument: WithLocal was given no local size in dimension 1"},
		{Range1(32).WithLocal(0), "range [32]/[0]: invalid argument: local size 0 in dimension 0"},
		{Range1(64).WithLocal(-4), "range [64]/[-4]: invalid argument: local size -4 in dimension 0"},
		{Range1(64).WithLocal(-1), "range [64]/[-1]: invalid argument: local size -1 in dimension 0"},
		{Range2(64, 64).WithLocal(16, -3), "range [64 64]/[16 -3]: invalid argument: local size -3 in dimension 1"},
		{Range2(64, 64).WithLocal(0, 0), "range [64 64]/[0 0]: invalid argument: local size 0 in dimension 0"},
		{Range1(32).WithLocal(8, -2), "local size -2 in dimension 1 of a 1-D range"},
		{Range1(32).WithLocal(8, 4), "local size 4 in dimension 1 of a 1-D range"},
		{Range1(32).WithLocal(8, 0), "WithLocal was given more sizes than the range's 1 dimensions"},
		{Range3(4, 4, 4).WithLocal(), "WithLocal was given no local size"},
		{Range3(4, 4, 4).WithLocal(1, 1, 1, 1), "WithLocal was given no local size"},
		{Range{Dims: 1, Global: [3]int{32, 1, 1}, Local: [3]int{0, 0, 0}}, ""},
		{Range2(8, 8).WithOffset(4), "range [8 8]+[4 _]: invalid argument: WithOffset was given no offset in dimension 1"},
		{Range1(8).WithOffset(4, 0), "WithOffset was given more sizes"},
		{Range2(8, 8).WithOffset(0, 4), ""},
		{Range2(8, 8).WithOffset(-2, 4), "range [8 8]+[-2 4]: invalid argument: global offset -2 in dimension 0"},
		{Range1(8).WithOffset(-1), "range [8]+[-1]: invalid argument: global offset -1 in dimension 0"},
		{Range{Dims: 1, Global: [3]int{32, 1, 1}, Local: [3]int{-1, 0, 0}}, "local size -1 in dimension 0"},
		{Range1(10).WithLocal(4), "local size 4 does not divide global size 10"},
		{Range{Dims: 4}, "4 dimensions"},
		{Range{}, "0 dimensions"},
	}
	for _, tt := range tests {
		err := tt.r.check()
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v.check() = %v, want %q", tt.r, err, tt.want)
		}
	}
	for r, want := range map[Range]string{
		Range2(32, 32).WithLocal(8):           "[32 32]/[8 _]",
		Range1(64).WithLocal(-4):              "[64]/[-4]",
		Range1(64).WithLocal(0):               "[64]/[0]",
		Range1(64).WithOffset(-4):             "[64]+[-4]",
		Range2(32, 32).WithLocal(8, 8):        "[32 32]/[8 8]",
		Range1(32).WithLocal(8, 4):            "[32]/[8 4]",
		Range1(64).WithOffset(128):            "[64]+[128]",
		Range2(64, 64).WithLocal(16, 16):      "[64 64]/[16 16]",
		Range2(64, 64).WithOffset(0, 0):       "[64 64]",
		Range3(4, 4, 4).WithLocal(1, 1, 1, 1): "[4 4 4]/[_ _ _]",
	} {
		if s := r.String(); s != want {
			t.Errorf("String() = %q, want %q", s, want)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    Config
		wantErr bool
	}{
		{env: map[string]string{"DGEN_DEVICE": "gpu", "DGEN_PROFILE": "1"}, want: Config{Device: "gpu", Profiling: true}},
		{env: map[string]string{"DGEN_DEVICE": "0:*"}, want: Config{Device: "0:*"}},
		{env: map[string]string{"DGEN_DEVICE": "gpu:*"}, want: Config{Device: "gpu:*"}},
		{env: map[string]string{"DGEN_DEVICE": "1:2"}, want: Config{Device: "1:2"}},
		{env: map[string]string{"DGEN_DEVICE": "0:"}, wantErr: true},
		{env: map[string]string{"DGEN_DEVICE": "0:0,0:1"}, wantErr: true},
		{env: map[string]string{"DGEN_DEVICE": "-1:0"}, wantErr: true},
		{env: map[string]string{"DGEN_DEVICE": "0:-1"}, wantErr: true},
		{env: map[string]string{"DGEN_PROFILE": "maybe"}, wantErr: true},
		{env: map[string]string{"DGEN_PROFILE": "on"}, want: Config{Profiling: true}},
		{env: map[string]string{"DGEN_ALLOC_POLICY": "tagged"}, want: Config{AllocPolicy: AllocTagged}},
		{env: map[string]string{"DGEN_ALLOC_POLICY": "Full"}, want: Config{AllocPolicy: AllocFull}},
		{env: map[string]string{"DGEN_ALLOC_POLICY": "lifo"}, wantErr: true},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "512MiB"}, want: Config{AllocMaxHeld: 512 << 20}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "1g"}, want: Config{AllocMaxHeld: 1 << 30}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "4096"}, want: Config{AllocMaxHeld: 4096}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "0"}, want: Config{}},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "-1"}, wantErr: true},
		{env: map[string]string{"DGEN_ALLOC_MAX_HELD": "lots"}, wantErr: true},
		{env: map[string]string{"DGEN_MEMORY_LIMIT": "64MiB"}, want: Config{MemoryLimit: 64 << 20}},
		{env: map[string]string{"DGEN_MEMORY_LIMIT": "0"}, want: Config{}},
		{env: map[string]string{"DGEN_MEMORY_LIMIT": "-1"}, wantErr: true},
		{env: map[string]string{"DGEN_MEMORY_LIMIT": "half"}, wantErr: true},
		{env: map[string]string{"DGEN_SYNC_LAUNCHES": "1"}, want: Config{SyncLaunches: true}},
		{env: map[string]string{"DGEN_SYNC_LAUNCHES": "0"}, want: Config{}},
		{env: map[string]string{"DGEN_SYNC_LAUNCHES": "always"}, wantErr: true},
	}
	for _, tt := range tests {
		cfg, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
		if err == nil && cfg.Cache == nil {
			t.Errorf("ConfigFromEnv(%v): no cache configuration", tt.env)
		}
		cfg.Cache = nil // CacheConfigFromEnv has its own tests
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(cfg, tt.want)) {
			t.Errorf("ConfigFromEnv(%v) = %+v, %v; want %+v, error %v", tt.env, cfg, err, tt.want, tt.wantErr)
		}
		for name := range tt.env { // every case sets one variable that can be wrong
			if err != nil && tt.env[name] != "1" && !strings.Contains(err.Error(), name+"=") && !strings.Contains(err.Error(), "("+name+")") {
				t.Errorf("ConfigFromEnv(%v): %v, want an error that names %s", tt.env, err, name)
			}
		}
		if _, ok := tt.env["DGEN_DEVICE"]; ok && err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ConfigFromEnv(%v): %v, want ErrInvalidArgument", tt.env, err)
		}
	}
}

// TestNewDevice: a Device carries what the backend says of the device in
// rt's own fields and types, and prints as "NAME (PLATFORM)".
func TestNewDevice(t *testing.T) {
	tests := []struct {
		in   driver.DeviceInfo
		want DeviceType
	}{
		{driver.DeviceInfo{Name: "H100", Platform: "NVIDIA CUDA", Type: driver.DeviceGPU, Version: "OpenCL 3.0 CUDA", DriverVersion: "550",
			OpenCLCVersion: "OpenCL C 1.2", GlobalMemSize: 80 << 30, MaxAllocSize: 20 << 30, LocalMemSize: 48 << 10, MemBaseAddrAlign: 512,
			ComputeUnits: 132, MaxWorkGroupSize: 1024, Extensions: []string{"cl_khr_fp64"}, Vendor: "NVIDIA", Handle: 7}, DeviceGPU},
		{driver.DeviceInfo{Name: "cpu", Platform: "Portable Computing Language", Type: driver.DeviceCPU}, DeviceCPU},
		{driver.DeviceInfo{Name: "fpga", Type: driver.DeviceAccelerator}, DeviceAccelerator},
		{driver.DeviceInfo{Name: "dsp", Type: driver.DeviceOther}, DeviceOther},
	}
	for _, tt := range tests {
		d := newDevice(tt.in, 3)
		in := tt.in
		want := &Device{Name: in.Name, Vendor: in.Vendor, Type: tt.want, Platform: in.Platform, Version: in.Version, DriverVersion: in.DriverVersion,
			OpenCLCVersion: in.OpenCLCVersion, GlobalMemSize: in.GlobalMemSize, MaxAllocSize: in.MaxAllocSize, LocalMemSize: in.LocalMemSize,
			MemBaseAddrAlign: in.MemBaseAddrAlign, ComputeUnits: in.ComputeUnits, MaxWorkGroupSize: in.MaxWorkGroupSize, Extensions: in.Extensions,
			info: in, index: 3}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("newDevice(%+v) = %+v, want %+v", in, d, want)
		}
		if got := d.String(); got != in.Name+" ("+in.Platform+")" {
			t.Errorf("String() = %q", got)
		}
	}
}

// TestNVIDIAOnOpenCL: Open says once, through the context's logger, that
// it runs an NVIDIA GPU on NVIDIA's OpenCL where automatic selection chose
// that because rt/cuda is not linked, and only then.
func TestNVIDIAOnOpenCL(t *testing.T) {
	gpu := driver.DeviceInfo{Name: "NVIDIA H200", Vendor: "NVIDIA Corporation", Platform: "NVIDIA CUDA", Type: driver.DeviceGPU}
	cpu := driver.DeviceInfo{Name: "cpu-x86", Vendor: "AuthenticAMD", Platform: "Portable Computing Language", Type: driver.DeviceCPU}
	tests := []struct {
		name    string
		backend Backend
		chosen  string
		devs    []driver.DeviceInfo
		cuda    bool
		want    bool
	}{
		{"auto without rt/cuda", "", "opencl", []driver.DeviceInfo{gpu}, false, true},
		{"auto, spelled", "Auto", "opencl", []driver.DeviceInfo{gpu}, false, true},
		{"rt/cuda linked", "", "opencl", []driver.DeviceInfo{gpu}, true, false},
		{"opencl asked for", BackendOpenCL, "opencl", []driver.DeviceInfo{gpu}, false, false},
		{"on cuda", "", "cuda", []driver.DeviceInfo{gpu}, true, false},
		{"a CPU", "", "opencl", []driver.DeviceInfo{cpu}, false, false},
	}
	for _, tt := range tests {
		got := nvidiaOnOpenCL(Config{Backend: tt.backend}, tt.chosen, tt.devs, tt.cuda)
		if (got != nil) != tt.want {
			t.Errorf("%s: %v, want a device: %v", tt.name, got, tt.want)
		}
	}
	var out strings.Builder
	log := slog.New(slog.NewTextHandler(&out, nil))
	nvidiaNoted.Store(false)
	defer nvidiaNoted.Store(true)
	noteNVIDIA(log, &gpu)
	noteNVIDIA(log, &gpu)
	if n := strings.Count(out.String(), "rt/backends"); n != 1 {
		t.Errorf("%d records naming rt/backends, want 1:\n%s", n, out.String())
	}
}
