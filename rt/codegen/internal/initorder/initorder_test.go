package initorder

import (
	"slices"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
)

// TestInitSeesRegistration checks what the init function of aa.go, which
// runs before any init of zz_generated.dgen.go could, saw.
func TestInitSeesRegistration(t *testing.T) {
	if InitErr != nil {
		testenv.SkipWithoutDevice(t, InitErr)
		t.Fatalf("init of aa.go: %v", InitErr)
	}
	if want := []int32{7, 7, 7, 7}; !slices.Equal(InitOut, want) {
		t.Errorf("init of aa.go computed %v, want %v", InitOut, want)
	}
}

// TestVarInitializerSeesKernelRegistration checks what a package-level
// variable initializer of aa.go that launches a generated kernel saw.
func TestVarInitializerSeesKernelRegistration(t *testing.T) {
	if VarErr != nil {
		testenv.SkipWithoutDevice(t, VarErr)
		t.Fatalf("variable initializer of aa.go: %v", VarErr)
	}
	if want := []int32{7, 7, 7, 7}; !slices.Equal(VarOut, want) {
		t.Errorf("variable initializer of aa.go computed %v, want %v", VarOut, want)
	}
}
