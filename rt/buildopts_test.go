package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/raw"
)

// A program whose directive has a bare -D, registered as generated code
// registers it.
var (
	badOptsProg  rt.Program
	_badOptsProg = &codegen.Program{Var: codegen.ProgramVar(&badOptsProg), ID: pkg + "badOptsProg", Name: "badOptsProg",
		Options: "-D", Image: "__kernel void nothing(__global int *out) { out[0] = 0; }\n"}
	badOptsKern = &codegen.Kernel{ID: pkg + "Nothing", Name: "nothing", Program: _badOptsProg, Params: 1}
	_           = codegen.Register(_badOptsProg)
	_           = codegen.Register(badOptsKern)
)

// TestBuildOptionsChecked gives PoCL a bare -D (which aborts it inside
// clBuildProgram) from each origin: each is an error wrapping
// ErrBuildFailed that names where the option came from, and no driver
// build happens.
func TestBuildOptionsChecked(t *testing.T) {
	want := func(t *testing.T, err error, from string) {
		t.Helper()
		if !errors.Is(err, rt.ErrBuildFailed) || !strings.Contains(err.Error(), from) || !strings.Contains(err.Error(), `"-D"`) {
			t.Errorf("error %v, want one wrapping ErrBuildFailed that names %q and the option", err, from)
		}
	}
	t.Run("environment", func(t *testing.T) {
		_, err := rt.ConfigFromEnv(func(v string) string {
			if v == "DGEN_PROGRAM_COMPILE_OPTIONS" {
				return "-cl-mad-enable -D"
			}
			return ""
		})
		want(t, err, "DGEN_PROGRAM_COMPILE_OPTIONS")
	})
	t.Run("config", func(t *testing.T) {
		_, err := rt.OpenConfig(withEnv(t, rt.Config{Device: "cpu", Cache: &rt.CacheConfig{InMemory: true, CompileOptions: "-D"}}))
		want(t, err, "Config.Cache.CompileOptions (DGEN_PROGRAM_COMPILE_OPTIONS)")
	})
	ctx := openCPU(t)
	t.Run("api", func(t *testing.T) {
		_, err := raw.Build(ctx, "bad", "__kernel void k(void) {}", "-D")
		want(t, err, "raw.Build")
	})
	t.Run("directive", func(t *testing.T) {
		_, err := raw.BuildGenerated(ctx, &badOptsProg)
		want(t, err, "//dgen:program directive of github.com/dgen-go/dgen/rt_test.badOptsProg")
		_, err = codegen.Acquire(ctx.Queue(), badOptsKern)
		want(t, err, "//dgen:program directive")
	})
	if s := ctx.Stats().Cache; s.Builds != 0 {
		t.Errorf("%d driver builds, want 0", s.Builds)
	}
}

// TestFunctionLikeDefine builds with function-like -D macros, which every
// OpenCL compiler takes, and checks that the kernel computes with them.
func TestFunctionLikeDefine(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	const src = `__kernel void sq(__global int *out) { int i = get_global_id(0); out[i] = ADD(SQ(i), ONE()); }`
	prog, err := raw.Build(ctx, "sq", src, "-DSQ(x)=((x)*(x)) -DADD(a,b)=((a)+(b)) -DONE()=1")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	k, err := prog.Kernel("sq")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	out, err := rt.NewBuffer[int32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Launch(q, k, rt.Range1(n)); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, n)
	if err := out.Read(q, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int32(i*i+1) {
			t.Fatalf("out[%d] = %d, want %d (SQ(i)+ONE())", i, v, i*i+1)
		}
	}
}
