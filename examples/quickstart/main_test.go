package main

import (
	"os"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
)

// TestMain skips the example, which needs a device, where there is none.
func TestMain(m *testing.M) {
	testenv.SkipExamplesWithoutDevice()
	os.Exit(m.Run())
}

// TestRun runs the quickstart, which verifies every element against Go.
func TestRun(t *testing.T) {
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	if err := run(4099); err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
}
