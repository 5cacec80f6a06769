package codegen_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/dgen-go/dgen/gen"
	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	_ "github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

const (
	pkg    = "github.com/dgen-go/dgen/rt/codegen_test."
	source = "__kernel void fill(__global int *out) { out[get_global_id(0)] = 1; }\n"
)

// Two programs made from k.cl: fresh, whose embedded source is the one
// dgen hashed, and stale, whose source was edited after go generate.
var (
	fresh, stale rt.Program

	freshProg = &codegen.Program{Var: codegen.ProgramVar(&fresh), ID: pkg + "fresh", Name: "k.cl", Image: source,
		Sources: []codegen.Source{{Name: "k.cl", Hash: xxhash.Sum64String(source), Embedded: source}}}
	staleProg = &codegen.Program{Var: codegen.ProgramVar(&stale), ID: pkg + "stale", Name: "k.cl", Image: source,
		Sources: []codegen.Source{{Name: "k.cl", Hash: xxhash.Sum64String(source), Embedded: strings.Replace(source, "= 1", "= 2", 1)}}}
	freshKernel = &codegen.Kernel{ID: pkg + "Fresh", Name: "fill", Program: freshProg, Params: 1}
	staleKernel = &codegen.Kernel{ID: pkg + "Stale", Name: "fill", Program: staleProg, Params: 1}
	_           = codegen.Register(freshProg)
	_           = codegen.Register(staleProg)
	_           = codegen.Register(freshKernel)
	_           = codegen.Register(staleKernel)
)

func open(t *testing.T) *rt.Context {
	t.Helper()
	ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(testenv.Backend()), Device: testenv.Device()})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// TestStaleSource checks that a program whose source changed after go
// generate fails every use with ErrStale naming the file, and that its
// fresh twin works.
func TestStaleSource(t *testing.T) {
	ctx := open(t)
	q := ctx.Queue()
	if p, err := raw.BuildGenerated(ctx, &fresh); err != nil {
		t.Fatalf("fresh program: %v", err)
	} else {
		p.Release()
	}
	k, err := codegen.Acquire(q, freshKernel)
	if err != nil {
		t.Fatalf("fresh kernel: %v", err)
	}
	codegen.SetBuffer(k, 0, rt.Buffer[int32]{}) // a nil buffer: an argument error
	if _, err := codegen.Launch(q, k, rt.Range1(1), nil); err == nil {
		t.Error("Launch with an argument error succeeded")
	}

	p, buildErr := raw.BuildGenerated(ctx, &stale)
	if buildErr == nil {
		p.Release()
	}
	k, acqErr := codegen.Acquire(q, staleKernel)
	if acqErr == nil {
		// Unlock the kernel.
		codegen.SetBuffer(k, 0, rt.Buffer[int32]{})
		codegen.Launch(q, k, rt.Range1(1), nil)
	}
	for what, err := range map[string]error{"Build": buildErr, "Acquire": acqErr} {
		if !errors.Is(err, rt.ErrStale) {
			t.Errorf("%s of the stale program: %v, want an error wrapping ErrStale", what, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "k.cl") || !strings.Contains(msg, "go generate") {
			t.Errorf("%s of the stale program: %q does not name k.cl and say to run go generate", what, msg)
		}
	}
}

// TestVersionWindow compiles a generated file's version assertion for the
// versions around the window: those inside compile, those outside fail
// with the file's message, which says to run go generate.
func TestVersionWindow(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to compile with")
	}
	for v := codegen.MinVersion - 1; v <= codegen.MaxVersion+1; v++ {
		dir, err := os.MkdirTemp(".", "version-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		src := fmt.Sprintf(`package v

import "github.com/dgen-go/dgen/rt/codegen"

var _ codegen.InWindow = codegen.Version[[min(1, max(0, %[1]d-codegen.MinVersion+1), max(0, codegen.MaxVersion-%[1]d+1))]struct{}]("ERROR: generated for version %[1]d: run go generate")
`, v)
		if err := os.WriteFile(filepath.Join(dir, "v.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(goTool, "build", "./"+dir).CombinedOutput()
		inside := codegen.MinVersion <= v && v <= codegen.MaxVersion
		switch {
		case inside && err != nil:
			t.Errorf("version %d, inside the window, does not compile: %v\n%s", v, err, out)
		case !inside && err == nil:
			t.Errorf("version %d, outside the window, compiles", v)
		case !inside && !strings.Contains(string(out), "run go generate"):
			t.Errorf("version %d: the compiler's message does not say to run go generate:\n%s", v, out)
		}
	}
	if codegen.GenVersion < codegen.MinVersion || codegen.GenVersion > codegen.MaxVersion {
		t.Errorf("GenVersion %d outside [%d, %d]", codegen.GenVersion, codegen.MinVersion, codegen.MaxVersion)
	}
}

// TestMaxSpecArgs checks that the generator refuses a spec with more
// fields of specialization-constant values than SpecArgs holds.
func TestMaxSpecArgs(t *testing.T) {
	if codegen.MaxSpecArgs != gen.MaxSpecFields {
		t.Errorf("codegen.MaxSpecArgs %d, gen.MaxSpecFields %d: they must be equal", codegen.MaxSpecArgs, gen.MaxSpecFields)
	}
}

// oneBuf is a kernel spec of fill: the shape that dgen fingerprints for
// it is "struct{Out rt.Buffer;}".
type oneBuf struct{ Out rt.Buffer[int32] }

// TestStaleShape checks that a kernel spec whose shape is not the one go
// generate fingerprinted (its fields changed where the compiler cannot
// see it) fails its first use with an error wrapping ErrStale that names
// the type and says to run go generate, and that the spec whose shape
// matches launches.
func TestStaleShape(t *testing.T) {
	q := open(t).Queue()
	cases := []struct {
		name  string
		shape string
		stale bool
	}{
		{"fresh", "struct{Out rt.Buffer;}", false},
		{"field renamed", "struct{Dst rt.Buffer;}", true},
		{"field type", "struct{Out int32;}", true},
		{"field added", "struct{Out rt.Buffer;N int32;}", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := codegen.Register(&codegen.Kernel{ID: pkg + "Shape" + c.name, Name: "fill", Program: freshProg, Params: 1,
				Shape: codegen.ShapeOf[oneBuf](xxhash.Sum64String(c.shape))})
			k, err := codegen.Acquire(q, d)
			if err == nil {
				codegen.SetBuffer[int32](k, 0, rt.Buffer[int32]{})
				codegen.Launch(q, k, rt.Range1(1), nil) // unlocks it; the nil buffer is an argument error
			}
			switch {
			case !c.stale && err != nil:
				t.Fatalf("Acquire: %v", err)
			case c.stale && !errors.Is(err, rt.ErrStale):
				t.Fatalf("Acquire: %v, want an error wrapping ErrStale", err)
			case c.stale && (!strings.Contains(err.Error(), "oneBuf") || !strings.Contains(err.Error(), "run go generate")):
				t.Errorf("Acquire: %q does not name the spec type and say to run go generate", err)
			}
		})
	}
}

// TestStaleOutsideHeader checks a header outside the package, which the
// generated file records by absolute path and hash but cannot embed: an
// edit of it fails the first use with ErrStale naming the header, and a
// header that is not on the machine (a binary deployed elsewhere) is not
// checked.
func TestStaleOutsideHeader(t *testing.T) {
	ctx := open(t)
	hdr := filepath.Join(t.TempDir(), "h.h")
	const text = "#define H 1\n"
	cases := []struct {
		name, now string // now: the header's content at first use, "" for none
		stale     bool
	}{
		{"unchanged", text, false},
		{"edited", "#define H 2\n", true},
		{"absent", "", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(hdr)
			if c.now != "" {
				if err := os.WriteFile(hdr, []byte(c.now), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var handle rt.Program
			codegen.Register(&codegen.Program{Var: codegen.ProgramVar(&handle), ID: fmt.Sprint(pkg, "outside", i), Name: "k.cl", Image: source,
				Sources: []codegen.Source{
					{Name: "k.cl", Hash: xxhash.Sum64String(source), Embedded: source},
					{Name: hdr, Hash: xxhash.Sum64String(text), Outside: true},
				}})
			p, err := raw.BuildGenerated(ctx, &handle)
			if err == nil {
				p.Release()
			}
			switch {
			case !c.stale && err != nil:
				t.Fatalf("Build: %v", err)
			case c.stale && (!errors.Is(err, rt.ErrStale) || !strings.Contains(err.Error(), hdr) || !strings.Contains(err.Error(), "run go generate")):
				t.Fatalf("Build: %v, want an error wrapping ErrStale that names %s and says to run go generate", err, hdr)
			}
		})
	}
}
