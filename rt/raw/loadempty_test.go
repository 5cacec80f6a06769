package raw_test

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestLoadEmptyBinary loads an empty binary, which no device accepts: an
// error wrapping driver.ErrInvalidBinary, again and again, never a crash of
// the process.
func TestLoadEmptyBinary(t *testing.T) {
	ctx := open(t)
	bins := make([][]byte, len(ctx.Devices()))
	for i := range 200 {
		if _, err := raw.Load(ctx, "empty", bins, ""); !errors.Is(err, driver.ErrInvalidBinary) {
			t.Fatalf("Load of empty binaries (%d) = %v, want an error wrapping driver.ErrInvalidBinary", i, err)
		}
	}
}
