//go:build cgo

package cuda

import (
	"errors"
	"github.com/dgen-go/dgen/rt/driver"
	"strings"
	"testing"
)

// fakeLib is a libcuda that loads, lacks the functions named in missing,
// and reports version.
type fakeLib struct {
	openErr error
	missing map[string]bool
	version int
}

func (f fakeLib) open(string) error                { return f.openErr }
func (f fakeLib) sym(i int) bool                   { return !f.missing[symbolName(i)] }
func (f fakeLib) init() (version int, code cuCode) { return f.version, 0 }

func TestOpenDriverErrors(t *testing.T) {
	tests := []struct {
		name string
		lib  fakeLib
		want []string // substrings of the error; none: no error
	}{
		{"loads", fakeLib{version: 13000}, nil},
		{"no library", fakeLib{openErr: errors.New("libcuda.so.1: cannot open shared object file")},
			[]string{"libcuda.so.1 does not load", "cannot open shared object file", "DGEN_BACKEND=opencl"}},
		{"missing function", fakeLib{version: 10020, missing: map[string]bool{"cuDevicePrimaryCtxRelease_v2": true}},
			[]string{"lacks cuDevicePrimaryCtxRelease_v2", "driver API 11.0 or later"}},
		{"old driver", fakeLib{version: 10020}, []string{"driver API 10.2", "needs 11.0 or later"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := open("libcuda.so.1", tt.lib)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNoDriver) {
				t.Fatalf("err = %v, want ErrNoDriver", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

func TestPickLocal(t *testing.T) {
	max := [3]int{1024, 1024, 64}
	tests := []struct {
		dims   int
		global [3]int
		want   [3]int
	}{
		{1, [3]int{1}, [3]int{1}},
		{1, [3]int{1024}, [3]int{256}},
		{1, [3]int{1000}, [3]int{250}},
		{1, [3]int{257}, [3]int{257 / 257}},
		{2, [3]int{512, 512}, [3]int{256, 1}},
		{2, [3]int{12, 40}, [3]int{12, 20}},
		{3, [3]int{4, 4, 128}, [3]int{4, 4, 16}},
	}
	for _, tt := range tests {
		got := pickLocal(ndrange(tt.dims, tt.global), 256, max)
		if got != tt.want {
			t.Errorf("pickLocal(%v) = %v, want %v", tt.global, got, tt.want)
		}
	}
}

func ndrange(dims int, g [3]int) (r driver.NDRange) { r.Dims, r.Global = dims, g; return r }

// TestFaultCodes: the CUDA results after which the context cannot be
// used wrap driver.ErrDeviceFault, and only those: out of resources
// before a launch ran is out of memory, not a fault.
func TestFaultCodes(t *testing.T) {
	for code, want := range map[int]error{
		700: driver.ErrDeviceFault, // CUDA_ERROR_ILLEGAL_ADDRESS, measured after an out-of-bounds write
		715: driver.ErrDeviceFault, // CUDA_ERROR_ILLEGAL_INSTRUCTION
		716: driver.ErrDeviceFault, // CUDA_ERROR_MISALIGNED_ADDRESS
		714: driver.ErrDeviceFault, // CUDA_ERROR_HARDWARE_STACK_ERROR
		719: driver.ErrDeviceFault, // CUDA_ERROR_LAUNCH_FAILED
		710: driver.ErrDeviceFault, // CUDA_ERROR_ASSERT
		214: driver.ErrDeviceFault, // CUDA_ERROR_ECC_UNCORRECTABLE
		701: driver.ErrOutOfMemory, // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
		2:   driver.ErrOutOfMemory, // CUDA_ERROR_OUT_OF_MEMORY
		999: nil,                   // CUDA_ERROR_UNKNOWN: not documented as sticky
		1:   nil,                   // CUDA_ERROR_INVALID_VALUE
	} {
		err := cuError("cuStreamSynchronize", cuCode(code))
		if fault := errors.Is(err, driver.ErrDeviceFault); fault != (want == driver.ErrDeviceFault) || want != nil && !errors.Is(err, want) {
			t.Errorf("code %d: %v (a fault: %v), want %v", code, err, fault, want)
		}
	}
}

func TestHasOption(t *testing.T) {
	for opts, want := range map[string]bool{
		LineInfoOption:                        true,
		"-cl-mad-enable " + LineInfoOption:    true,
		LineInfoOption + " -DN=1":             true,
		"-nv-line-info-x":                     false,
		"-DX=" + LineInfoOption[1:]:           false,
		"":                                    false,
		"-cl-kernel-arg-info -nv-line-info  ": true,
	} {
		if got := hasOption(opts, LineInfoOption); got != want {
			t.Errorf("hasOption(%q) = %v, want %v", opts, got, want)
		}
	}
}

// TestMemsetNode checks the memset node that a graph's fill is captured
// as, and whose buffer a graph parameter sets in place.
func TestMemsetNode(t *testing.T) {
	for _, tc := range []struct {
		pattern     []byte
		size        int
		value       uint32
		elem, width int
		ok          bool
	}{
		{[]byte{7}, 10, 7, 1, 10, true},
		{[]byte{1, 2}, 8, 0x0201, 2, 4, true},
		{[]byte{0, 0, 0x80, 0x3f}, 16, 0x3f800000, 4, 4, true}, // float32 1
		{make([]byte, 8), 16, 0, 0, 0, false},                  // two nodes
		{[]byte{1}, 0, 0, 0, 0, false},                         // none
	} {
		v, e, w, ok := memsetNode(tc.pattern, tc.size)
		if ok != tc.ok || v != tc.value || e != tc.elem || w != tc.width {
			t.Errorf("memsetNode(%v, %d) = %#x, %d, %d, %v; want %#x, %d, %d, %v", tc.pattern, tc.size, v, e, w, ok, tc.value, tc.elem, tc.width, tc.ok)
		}
	}
}
