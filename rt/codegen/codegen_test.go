package codegen_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

const (
	pkg    = "github.com/dgen-go/dgen/rt/codegen_test."
	source = "__kernel void fill(__global int *out) { out[get_global_id(0)] = 1; }\n"
)

// Two programs made from k.cl: fresh, whose embedded source is the one
// dgen hashed, and stale, whose source was edited after go generate.
var (
	fresh, stale rt.Program

	freshProg = codegen.RegisterProgram(&fresh, codegen.Program{ID: pkg + "fresh", Name: "k.cl", Image: source,
		Sources: []codegen.Source{{Name: "k.cl", Hash: xxhash.Sum64String(source), Embedded: source}}})
	staleProg = codegen.RegisterProgram(&stale, codegen.Program{ID: pkg + "stale", Name: "k.cl", Image: source,
		Sources: []codegen.Source{{Name: "k.cl", Hash: xxhash.Sum64String(source), Embedded: strings.Replace(source, "= 1", "= 2", 1)}}})
	freshKernel = codegen.RegisterKernel(freshProg, codegen.Kernel{ID: pkg + "Fresh", Name: "fill", Params: 1})
	staleKernel = codegen.RegisterKernel(staleProg, codegen.Kernel{ID: pkg + "Stale", Name: "fill", Params: 1})
)

func open(t *testing.T) *rt.Context {
	t.Helper()
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
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
	if p, err := fresh.Build(ctx); err != nil {
		t.Fatalf("fresh program: %v", err)
	} else {
		p.Release()
	}
	k, err := freshKernel.Acquire(q)
	if err != nil {
		t.Fatalf("fresh kernel: %v", err)
	}
	if _, err := freshKernel.Launch(q, k, rt.Range1(1), errors.New("not launched"), nil); err == nil {
		t.Error("Launch with an argument error succeeded")
	}

	p, buildErr := stale.Build(ctx)
	if buildErr == nil {
		p.Release()
	}
	k, acqErr := staleKernel.Acquire(q)
	if acqErr == nil {
		// Unlock the kernel, or Close would wait on it.
		staleKernel.Launch(q, k, rt.Range1(1), errors.New("not launched"), nil)
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

// TestVersion checks that the contract names a version that generated
// files can assign.
func TestVersion(t *testing.T) {
	var v codegen.LatestVersion = codegen.Version[[0][1]struct{}]("generated")
	if v != "generated" {
		t.Fatal(v)
	}
}
