package initorder

import (
	"slices"
	"testing"
)

// TestInitSeesRegistration checks what the init function of aa.go, which
// runs before any init of zz_generated.dgen.go could, saw.
func TestInitSeesRegistration(t *testing.T) {
	if InitErr != nil {
		t.Fatalf("init of aa.go: %v", InitErr)
	}
	if want := []int32{7, 7, 7, 7}; !slices.Equal(InitOut, want) {
		t.Errorf("init of aa.go computed %v, want %v", InitOut, want)
	}
}
