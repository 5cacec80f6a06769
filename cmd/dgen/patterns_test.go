package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPatterns generates and checks a module's packages through
// package patterns, as go generate ./... and CI name them: only the
// packages that run dgen are taken, a stale one is named, and a pattern
// that matches none of them is an error.
func TestCheckPatterns(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	// The go:generate line is put together so that no line of this file is
	// one: dgen -check ./... over this module must not take cmd/dgen.
	const kernels = `package %s

import "github.com/dgen-go/dgen/rt"

` + "//go:" + `generate go run github.com/dgen-go/dgen/cmd/dgen

//dgen:program source=k.cl
var Prog rt.Program

//dgen:kernel program=Prog name=put
type Put struct {
	Out rt.Buffer[float32]
}
`
	const cl = "__kernel void put(__global float *out) { out[0] = 2.0f; }\n"
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module patterns\n\ngo 1.26\n\nrequire github.com/dgen-go/dgen v0.0.0\n\nreplace github.com/dgen-go/dgen => " + root + "\n",
		"go.sum":      string(sum),
		"a/a.go":      strings.Replace(kernels, "%s", "a", 1),
		"a/k.cl":      cl,
		"plain/p.go":  "package plain\n\n// Doc mentions //dgen:program in a comment, not a directive.\nconst S = \"\\n//dgen:program\"\n",
		"deep/c/c.go": strings.Replace(kernels, "%s", "c", 1),
		"deep/c/k.cl": cl,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dgen := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(append([]string{"-C", dir}, args...), &out, &out)
		return code, out.String()
	}
	if code, out := dgen("./..."); code != 0 {
		t.Fatalf("dgen ./...: exit %d: %s", code, out)
	}
	for _, p := range []string{"a", "deep/c"} {
		if _, err := os.Stat(filepath.Join(dir, p, "zz_generated.dgen.go")); err != nil {
			t.Errorf("dgen ./... did not generate %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "plain", "zz_generated.dgen.go")); err == nil {
		t.Error("dgen ./... generated for a package that does not run dgen")
	}
	if code, out := dgen("-check", "./..."); code != 0 {
		t.Fatalf("dgen -check ./... after generating: exit %d: %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "deep/c/k.cl"), []byte(strings.Replace(cl, "2.0f", "3.0f", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := dgen("-check", "./...")
	if code != 1 || !strings.Contains(out, filepath.Join("deep", "c")) || strings.Contains(out, filepath.Join(dir, "a")+":") {
		t.Errorf("dgen -check ./... after editing deep/c/k.cl: exit %d: %q, want exit 1 naming deep/c alone", code, out)
	}
	if code, out := dgen("-check", "./plain"); code != 1 || !strings.Contains(out, "no package") {
		t.Errorf("dgen -check ./plain: exit %d: %q, want exit 1 saying no package runs dgen", code, out)
	}
}
