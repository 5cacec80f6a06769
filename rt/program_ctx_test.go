package rt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/raw"
)

var (
	ctxProg = codegen.Register(&codegen.Program{
		ID:    pkg + "ctxProg",
		Image: "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }",
		Name:  "ctx_prog.cl",
		Var:   codegen.ProgramVar(&ctxProgHandle),
	})
	ctxProgHandle rt.Program
	ctxKern       = codegen.Register(&codegen.Kernel{ID: pkg + "ctxTwice", Name: "twice", Program: ctxProg, Params: 1})
)

// TestProgramBuild builds a generated program ahead of its first launch:
// a done context is an error wrapping its error, and after a build the
// first launch builds nothing.
func TestProgramBuild(t *testing.T) {
	t.Setenv("DGEN_CACHE_DIR", t.TempDir())
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testenv.Device()}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ctxProgHandle.Build(done, ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Build with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := raw.BuildGeneratedContext(done, ctx, &ctxProgHandle); !errors.Is(err, context.Canceled) {
		t.Errorf("BuildGeneratedContext with a cancelled context = %v, want context.Canceled", err)
	}
	if err := ctxProgHandle.Build(context.Background(), ctx); err != nil {
		t.Fatal(err)
	}
	if n := ctx.Stats().Cache.Builds; n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
	q := ctx.Queue()
	x, err := rt.NewBuffer[int32](ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if err := x.Write(q, []int32{3, 4}); err != nil {
		t.Fatal(err)
	}
	k, err := codegen.Acquire(q, ctxKern)
	if err != nil {
		t.Fatal(err)
	}
	codegen.SetBuffer(k, 0, x)
	if err := codegen.Submit(q, k, rt.Range1(2), nil); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, 2)
	if err := x.Read(q, got); err != nil || got[0] != 6 || got[1] != 8 {
		t.Errorf("got %v, %v; want [6 8]", got, err)
	}
	if s := ctx.Stats().Cache; s.Builds != 1 {
		t.Errorf("%d builds after the first launch, want the one of Build", s.Builds)
	}
}
