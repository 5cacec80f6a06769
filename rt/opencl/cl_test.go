//go:build cgo

package opencl

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

func TestErrorKind(t *testing.T) {
	tests := []struct {
		code   int32
		target error
		want   bool
	}{
		{-4, driver.ErrOutOfMemory, true},
		{-5, driver.ErrOutOfMemory, true},
		{-6, driver.ErrOutOfMemory, true},
		{-11, driver.ErrBuildFailed, true},
		{-15, driver.ErrBuildFailed, true},
		{-17, driver.ErrBuildFailed, true},
		{-42, driver.ErrInvalidBinary, true},
		{-46, driver.ErrNoKernel, true},
		{-30, driver.ErrOutOfMemory, false},
		{-11, driver.ErrOutOfMemory, false},
	}
	for _, tt := range tests {
		err := error(newError("clX", tt.code, ""))
		if got := errors.Is(err, tt.target); got != tt.want {
			t.Errorf("errors.Is(code %d, %v) = %v, want %v", tt.code, tt.target, got, tt.want)
		}
	}
}

// BenchmarkCgoCall times a call into C that does nothing, with the
// annotations the launch path's call has: what crossing into C costs
// each launch on this machine.
func BenchmarkCgoCall(b *testing.B) {
	for b.Loop() {
		nothing()
	}
}
