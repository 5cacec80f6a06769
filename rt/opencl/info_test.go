package opencl

import (
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// TestSetLimits checks the launch limits recorded beyond what OpenCL
// reports: PoCL's scheduler counts, and none for another platform
// (NVIDIA's OpenCL runs 70000 work-groups in dimension 1, where a CUDA
// grid stops at 65535: rt/internal/core's TestGridLimits on the GPU).
func TestSetLimits(t *testing.T) {
	for _, tt := range []struct {
		platform string
		groups   [3]int64
		total    int64
	}{
		{poclPlatform, [3]int64{1<<32 - 1, 1<<32 - 1, 1<<32 - 1}, 1<<32 - 1},
		{"NVIDIA CUDA", [3]int64{}, 0},
		{"Intel(R) OpenCL", [3]int64{}, 0},
	} {
		var info driver.DeviceInfo
		setLimits(&info, tt.platform)
		if info.MaxGroups != tt.groups || info.MaxGroupsTotal != tt.total {
			t.Errorf("%s: MaxGroups %v, MaxGroupsTotal %d; want %v, %d", tt.platform, info.MaxGroups, info.MaxGroupsTotal, tt.groups, tt.total)
		}
	}
}
