package rt_test

import (
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/apicheck"
)

// rt's API has one audience: applications, which read it in go doc and on
// pkg.go.dev. The rules, which the tests below check on rt's source:
//
//   - no exported identifier of rt is documented as being for generated
//     code, backends or tests (rt/codegen, rt/driver and export_test.go
//     serve those);
//   - an application needs no import of rt/driver or rt/diskcache, and no
//     type of an internal package, for anything rt documents: no exported
//     identifier's signature, field or method mentions one of their types,
//     directly or through the types of dgen's other packages that it
//     mentions;
//   - go doc shows every exported method and field of rt's types, each
//     method with its documentation: rt defines its types (an alias of
//     another package's type shows none of its methods, and a type
//     defined over another package's struct none of its fields);
//   - rt forwards every exported method of the types of rt/internal/core,
//     its implementation, that it defines its own over.

const (
	rtPath   = "github.com/dgen-go/dgen/rt"
	corePath = "github.com/dgen-go/dgen/rt/internal/core"
)

// TestAudience checks rt's audience rules.
func TestAudience(t *testing.T) {
	fset := token.NewFileSet()
	files := apicheck.SourceFiles(t, fset, ".", "rt")
	if bad := apicheck.OtherAudience(t, fset, files, rtPath); len(bad) > 0 {
		t.Errorf("rt documents identifiers for another audience than applications (move them to rt/codegen, rt/driver or export_test.go, or document them for applications):\n\t%s", strings.Join(bad, "\n\t"))
	}
	pkgs := apicheck.Load(t, rtPath)
	if bad := apicheck.TypeViolations(pkgs[rtPath], apicheck.Backstage); len(bad) > 0 {
		t.Errorf("rt's API needs a type of rt/driver, rt/diskcache or an internal package (give rt a type of its own):\n\t%s", strings.Join(bad, "\n\t"))
	}
}

// TestGoDoc checks that go doc shows every exported method and field of
// rt's types, each method with its documentation.
func TestGoDoc(t *testing.T) {
	fset := token.NewFileSet()
	files := apicheck.SourceFiles(t, fset, ".", "rt")
	pkgs := apicheck.Load(t, rtPath)
	if bad := apicheck.Undocumented(t, fset, files, pkgs[rtPath]); len(bad) > 0 {
		t.Errorf("go doc does not show these of rt (define the type in rt, declare its fields there, and document each method):\n\t%s", strings.Join(bad, "\n\t"))
	}
}

// TestForwarders checks that rt forwards every exported method of the
// core's types to applications, with a method of the rt type of the same
// name: a method added to the core reaches them, or this test lists it. A
// method that rt must not show goes in notForwarded, with the reason.
func TestForwarders(t *testing.T) {
	apicheck.SourceFiles(t, token.NewFileSet(), ".", "rt") // skips where there is no source
	pkgs := apicheck.Load(t, rtPath, corePath)
	rtPkg, corePkg := pkgs[rtPath], pkgs[corePath]
	var missing []string
	for _, name := range rtPkg.Scope().Names() {
		tn, ok := rtPkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() || !tn.Exported() {
			continue
		}
		ct, ok := corePkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		coreT, ok := types.Unalias(ct.Type()).(*types.Named)
		if !ok {
			continue
		}
		rtT := tn.Type().(*types.Named)
		have := map[string]bool{}
		for i := range rtT.NumMethods() {
			have[rtT.Method(i).Name()] = true
		}
		for i := range coreT.NumMethods() {
			m := coreT.Method(i)
			if full := name + "." + m.Name(); m.Exported() && !have[m.Name()] && notForwarded[full] == "" {
				missing = append(missing, full)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("rt does not forward these methods of rt/internal/core (add a documented method to rt's type, or list it in notForwarded):\n\t%s", strings.Join(missing, "\n\t"))
	}
}

// notForwarded are the exported methods of the core's types that rt
// shows no method for, each with the reason.
var notForwarded = map[string]string{}
