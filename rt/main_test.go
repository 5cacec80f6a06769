package rt_test

import (
	"os"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
)

// TestMain skips the examples, which need a device, where there is none.
func TestMain(m *testing.M) {
	testenv.SkipExamplesWithoutDevice()
	os.Exit(m.Run())
}
