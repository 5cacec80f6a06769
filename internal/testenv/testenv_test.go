package testenv_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/internal/testenv"
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
