package devsel

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

func TestSelect(t *testing.T) {
	cpu := driver.DeviceInfo{PlatformIndex: 0, Index: 0, Name: "pthread-cpu", Platform: "Portable Computing Language", Type: driver.DeviceCPU}
	cpu2 := driver.DeviceInfo{PlatformIndex: 0, Index: 1, Name: "pthread-cpu", Platform: "Portable Computing Language", Type: driver.DeviceCPU}
	gpu := driver.DeviceInfo{PlatformIndex: 1, Index: 0, Name: "NVIDIA H200", Platform: "NVIDIA CUDA", Type: driver.DeviceGPU}
	both := []driver.PlatformInfo{{Index: 0, Devices: []driver.DeviceInfo{cpu, cpu2}}, {Index: 1, Devices: []driver.DeviceInfo{gpu}}}
	cpuOnly := both[:1]
	// NVIDIA's OpenCL after PoCL, with two GPUs; then a platform that
	// lists a CPU before its GPU.
	gpu0 := driver.DeviceInfo{PlatformIndex: 1, Index: 0, Name: "NVIDIA H100", Platform: "NVIDIA CUDA", Type: driver.DeviceGPU}
	gpu1 := driver.DeviceInfo{PlatformIndex: 1, Index: 1, Name: "NVIDIA H100", Platform: "NVIDIA CUDA", Type: driver.DeviceGPU}
	mixedCPU := driver.DeviceInfo{PlatformIndex: 2, Index: 0, Name: "host", Platform: "Mixed", Type: driver.DeviceCPU}
	mixedGPU := driver.DeviceInfo{PlatformIndex: 2, Index: 1, Name: "igpu", Platform: "Mixed", Type: driver.DeviceGPU}
	twoGPUs := []driver.PlatformInfo{{Index: 0, Devices: []driver.DeviceInfo{cpu, cpu2}}, {Index: 1, Devices: []driver.DeviceInfo{gpu0, gpu1}},
		{Index: 2, Devices: []driver.DeviceInfo{mixedCPU, mixedGPU}}}
	mixed := []driver.PlatformInfo{{Index: 2, Devices: []driver.DeviceInfo{mixedCPU, mixedGPU}}}
	tests := []struct {
		selector  string
		platforms []driver.PlatformInfo
		want      []driver.DeviceInfo
		err       error
	}{
		{"", both, []driver.DeviceInfo{gpu}, nil},
		{"", cpuOnly, []driver.DeviceInfo{cpu}, nil},
		{"cpu", both, []driver.DeviceInfo{cpu}, nil},
		{"GPU", both, []driver.DeviceInfo{gpu}, nil},
		{"gpu", cpuOnly, nil, ErrNoDevice},
		{"0:1", both, []driver.DeviceInfo{cpu2}, nil},
		{"1:0", both, []driver.DeviceInfo{gpu}, nil},
		{"0:*", both, []driver.DeviceInfo{cpu, cpu2}, nil},
		{"2:0", both, nil, ErrNoDevice},
		{"0:5", both, nil, ErrNoDevice},
		{"h200", both, []driver.DeviceInfo{gpu}, nil},
		{"portable", both, []driver.DeviceInfo{cpu}, nil},
		{"nvidia", both, []driver.DeviceInfo{gpu}, nil},
		{"tpu", both, nil, ErrNoDevice},
		{"", nil, nil, ErrNoDevice},
		{"gpu:*", twoGPUs, []driver.DeviceInfo{gpu0, gpu1}, nil},
		{" GPU:* ", twoGPUs, []driver.DeviceInfo{gpu0, gpu1}, nil},
		{"cpu:*", twoGPUs, []driver.DeviceInfo{cpu, cpu2}, nil},
		{"gpu:*", both, []driver.DeviceInfo{gpu}, nil},
		{"gpu:*", mixed, []driver.DeviceInfo{mixedGPU}, nil},
		{"cpu:*", mixed, []driver.DeviceInfo{mixedCPU}, nil},
		{"gpu:*", cpuOnly, nil, ErrNoDevice},
		{"accelerator:*", twoGPUs, nil, ErrNoDevice},
		{"1:*", twoGPUs, []driver.DeviceInfo{gpu0, gpu1}, nil},
		{"gpu:0", twoGPUs, nil, ErrNoDevice}, // a device or platform name, which none contains
	}
	for _, tt := range tests {
		got, err := Select(tt.platforms, tt.selector)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Select(%q) error = %v, want %v", tt.selector, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q): %v", tt.selector, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("Select(%q) = %d devices, want %d", tt.selector, len(got), len(tt.want))
			continue
		}
		for i := range got {
			if got[i].PlatformIndex != tt.want[i].PlatformIndex || got[i].Index != tt.want[i].Index {
				t.Errorf("Select(%q)[%d] = %d:%d, want %d:%d", tt.selector, i, got[i].PlatformIndex, got[i].Index, tt.want[i].PlatformIndex, tt.want[i].Index)
			}
		}
	}
}

// TestCheck: a selector that starts with a platform index must go on with
// a device index or "*"; anything else is well formed.
func TestCheck(t *testing.T) {
	for sel, ok := range map[string]bool{
		"": true, "gpu": true, "cpu:*": true, "0:0": true, "1:*": true, " 2:3 ": true, "NVIDIA H200": true, "gpu:0": true, "a:b:c": true,
		"0:": false, "0:0,0:1": false, "0:x": false, "-1:0": false, "0:-1": false, "1:0:0": false,
	} {
		if err := Check(sel); (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want ok %v", sel, err, ok)
		}
	}
}
