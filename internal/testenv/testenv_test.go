package testenv_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt/driver"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// TestSkipWithoutDevice runs SkipWithoutDevice in a subtest per error and
// DGEN_DEVICE setting and checks whether it skipped.
func TestSkipWithoutDevice(t *testing.T) {
	noDevice := fmt.Errorf("open context: select device %q: %w: no platform lists a device", "cpu", devsel.ErrNoDevice)
	for _, tt := range []struct {
		name, env string
		err       error
		skip      bool
	}{
		{"no device", "", noDevice, true},
		{"no device, DGEN_DEVICE set", "gpu", noDevice, false},
		{"another error", "", errors.New("clBuildProgram: CL_BUILD_PROGRAM_FAILURE"), false},
		{"no error", "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DGEN_DEVICE", tt.env)
			t.Setenv("DGEN_BACKEND", "")
			skipped := true
			inner := t.Run("inner", func(t *testing.T) {
				testenv.SkipWithoutDevice(t, tt.err)
				skipped = false
			})
			if !inner {
				t.Fatal("the inner test failed")
			}
			if skipped != tt.skip {
				t.Errorf("skipped = %v, want %v", skipped, tt.skip)
			}
		})
	}
}

// TestRequireDeviceWithoutDevice runs RequireDevice in a child process
// whose OpenCL ICD loader finds no driver (OCL_ICD_VENDORS names an empty
// directory): the child's test must skip, saying what to install.
func TestRequireDeviceWithoutDevice(t *testing.T) {
	if os.Getenv("DGEN_TESTENV_CHILD") == "1" {
		if b, err := driver.Lookup("opencl"); err == nil {
			if ps, err := b.Platforms(); err == nil && len(ps) > 0 {
				t.Skipf("this machine's ICD loader lists %d platforms with OCL_ICD_VENDORS naming an empty directory: it cannot hide its drivers", len(ps))
			}
		}
		testenv.RequireDevice(t)
		t.Fatal("RequireDevice did not skip on a machine without an OpenCL device")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRequireDeviceWithoutDevice$", "-test.v")
	cmd.Env = append(os.Environ(), "DGEN_TESTENV_CHILD=1", "OCL_ICD_VENDORS="+t.TempDir(), "DGEN_DEVICE=", "DGEN_BACKEND=opencl")
	out, err := cmd.CombinedOutput()
	if err == nil && strings.Contains(string(out), "cannot hide its drivers") {
		t.Skipf("child: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- SKIP: TestRequireDeviceWithoutDevice") || !strings.Contains(string(out), "apt-get install pocl-opencl-icd") {
		t.Fatalf("child without a device: %v\n%s", err, out)
	}
}
