package dgen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// envTable is the one file of the module, tests aside, that reads or sets
// the process environment: the table of every variable that dgen reads
// (rt.EnvVars, `dgen env`).
const envTable = "rt/internal/core/env.go"

// envExempt are the other files that may, each with the reason. A
// package's own test-only knobs are not settings of dgen's.
var envExempt = map[string]string{
	"internal/testenv/testenv.go":   "the tests' device skips: imported by tests only, it reads DGEN_DEVICE and DGEN_BACKEND as rt.Open would",
	"internal/clcorpus/clcorpus.go": "the OpenCL C corpus of the tests (DGEN_CL_CORPUS): imported by tests only",
	"bench/inproc/main.go":          "the benchmark's own knobs (INPROC_FAMILIES, INPROC_PROBES, INPROC_PROFILE), which its scripts set",
	"gen/load.go":                   "GOOS and GOARCH, the go command's own variables: the generator asks for the host's packages when the go command's target is another system",
}

// envFuncs are the functions that read or set the process environment.
var envFuncs = map[string]map[string]bool{
	"os":      {"Getenv": true, "LookupEnv": true, "Setenv": true, "Unsetenv": true, "Clearenv": true, "ExpandEnv": true},
	"syscall": {"Getenv": true, "Setenv": true, "Unsetenv": true, "Clearenv": true},
}

// TestEnvironmentReadInOnePlace: no non-test Go file of the module but the
// table (and the exempt, each with its reason) calls os.Getenv,
// os.LookupEnv, os.Setenv, os.Unsetenv, os.Clearenv, os.ExpandEnv or
// their syscall kin. Passing os.Getenv as a value (to rt.ConfigFromEnv)
// is how a program gives the table its environment, and is not a call.
func TestEnvironmentReadInOnePlace(t *testing.T) {
	fset := token.NewFileSet()
	var stray []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		path = filepath.ToSlash(path)
		if path == envTable || envExempt[path] != "" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imported := map[string]string{} // local name: import path
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			name := filepath.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imported[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && envFuncs[imported[x.Name]][sel.Sel.Name] {
				stray = append(stray, fset.Position(call.Pos()).String()+": "+imported[x.Name]+"."+sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stray) > 0 {
		t.Errorf("these read or set the process environment outside %s (add the variable to its table and take the setting through rt.Config or driver.Options):\n\t%s",
			envTable, strings.Join(stray, "\n\t"))
	}
	if _, err := parser.ParseFile(fset, envTable, nil, parser.PackageClauseOnly); err != nil {
		t.Errorf("the table %s: %v", envTable, err)
	}
}
