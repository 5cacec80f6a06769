package raw_test

import (
	"go/token"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/apicheck"
)

const rawPath = "github.com/dgen-go/dgen/rt/raw"

// TestAudience checks rt/raw's audience rules, which are rt's: raw is for
// applications that build kernels at run time or port OpenCL host code,
// so its documentation addresses them, its API needs no type of
// rt/driver, rt/diskcache or an internal package (raw has its own
// ArgInfo and WorkGroupInfo), and go doc shows all of it.
func TestAudience(t *testing.T) {
	fset := token.NewFileSet()
	files := apicheck.SourceFiles(t, fset, ".", "raw")
	if bad := apicheck.OtherAudience(t, fset, files, rawPath); len(bad) > 0 {
		t.Errorf("rt/raw documents identifiers for another audience than applications:\n\t%s", strings.Join(bad, "\n\t"))
	}
	pkgs := apicheck.Load(t, rawPath)
	if bad := apicheck.TypeViolations(pkgs[rawPath], apicheck.Backstage); len(bad) > 0 {
		t.Errorf("rt/raw's API needs a type of rt/driver, rt/diskcache or an internal package (give rt/raw a type of its own):\n\t%s", strings.Join(bad, "\n\t"))
	}
	if bad := apicheck.Undocumented(t, fset, files, pkgs[rawPath]); len(bad) > 0 {
		t.Errorf("go doc does not show these of rt/raw:\n\t%s", strings.Join(bad, "\n\t"))
	}
}
