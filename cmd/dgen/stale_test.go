package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
)

// staleProgram is a package that launches a kernel and prints what it
// computed.
const staleProgram = `package main

import (
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

//dgen:program source=k.cl
var Prog rt.Program

//dgen:kernel program=Prog name=put
type Put struct {
	Out rt.Buffer[float32]
}

func main() {
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer ctx.Close()
	q := ctx.Queue()
	out, err := rt.NewBuffer[float32](ctx, 1)
	if err == nil {
		err = (&Put{Out: out}).Enqueue(q, rt.Range1(1))
	}
	got := make([]float32, 1)
	if err == nil {
		err = out.Read(q, got)
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println(got[0])
}
`

// TestStaleSourceEndToEnd generates a program in a module of its own, edits
// its .cl file, or a header the .cl file includes, without running go
// generate, and checks that dgen -check and the compiled program both
// report it, the program naming the file.
func TestStaleSourceEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	testenv.RequireDevice(t)
	tests := []struct {
		name         string
		files        map[string]string
		edit, edited string
	}{
		{name: "source", files: map[string]string{"k.cl": "__kernel void put(__global float *out) { out[0] = 2.0f; }\n"},
			edit: "k.cl", edited: "__kernel void put(__global float *out) { out[0] = 3.0f; }\n"},
		{name: "header", files: map[string]string{"k.cl": "#include \"v.h\"\n__kernel void put(__global float *out) { out[0] = VALUE; }\n", "v.h": "#define VALUE 2.0f\n"},
			edit: "v.h", edited: "#define VALUE 3.0f\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { staleEndToEnd(t, tt.files, tt.edit, tt.edited) })
	}
}

func staleEndToEnd(t *testing.T, sources map[string]string, edit, edited string) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module stale\n\ngo 1.26\n\nrequire github.com/dgen-go/dgen v0.0.0\n\nreplace github.com/dgen-go/dgen => " + root + "\n",
		"go.sum":  string(sum),
		"main.go": staleProgram,
	}
	for name, content := range sources {
		files[name] = content
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dgen := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(append([]string{"-C", dir}, args...), &out, &out)
		return code, out.String()
	}
	goRun := func() (string, error) {
		cmd := exec.Command("go", "run", ".")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if code, out := dgen(); code != 0 {
		t.Fatalf("dgen: exit %d: %s", code, out)
	}
	if code, out := dgen("-check"); code != 0 {
		t.Fatalf("dgen -check after generating: exit %d: %s", code, out)
	}
	if out, err := goRun(); err != nil || strings.TrimSpace(out) != "2" {
		t.Fatalf("generated program: %v: %s, want 2", err, out)
	}

	// Edit the kernel or its header and forget go generate.
	if err := os.WriteFile(filepath.Join(dir, edit), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := dgen("-check"); code != 1 || !strings.Contains(out, "zz_generated.dgen.go") {
		t.Errorf("dgen -check after editing %s: exit %d: %q, want exit 1 naming zz_generated.dgen.go", edit, code, out)
	}
	out, err := goRun()
	if err == nil || !strings.Contains(out, edit) || !strings.Contains(out, "go generate") {
		t.Errorf("stale program: %v: %q, want a failure naming %s and saying to run go generate", err, out, edit)
	}
}
