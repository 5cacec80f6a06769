package rt_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// Errors name their subject (issue 48): the environment variable a bad
// value came from, the argument a raw launch left unset, the declaration
// that go generate has not registered.

// TestDeviceEnvNamed opens a context whose device selector matches
// nothing, or is not one: the error names the setting, the field and its
// variable, and is the same whether the selector came from DGEN_DEVICE or
// from Config. DGEN_BACKEND is cleared, so that both forms try the same
// backends.
func TestDeviceEnvNamed(t *testing.T) {
	t.Setenv("DGEN_BACKEND", "")
	for _, tc := range []struct {
		sel  string
		want error
	}{{"no-such-device-anywhere", rt.ErrNoDevice}, {"0:", rt.ErrInvalidArgument}, {"0:0,0:1", rt.ErrInvalidArgument}} {
		t.Setenv("DGEN_DEVICE", tc.sel)
		_, envErr := rt.Open()
		t.Setenv("DGEN_DEVICE", "")
		_, cfgErr := rt.OpenConfig(rt.Config{Device: tc.sel})
		for _, err := range []error{envErr, cfgErr} {
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "Config.Device (DGEN_DEVICE)") {
				t.Errorf("selector %q: %v, want %v naming Config.Device (DGEN_DEVICE)", tc.sel, err, tc.want)
			}
		}
		if envErr != nil && cfgErr != nil && envErr.Error() != cfgErr.Error() {
			t.Errorf("selector %q: from the environment %v, from Config %v; want the same", tc.sel, envErr, cfgErr)
		}
	}
}

// TestUnsetArgumentNamed launches a raw kernel with an argument never set:
// the driver says CL_INVALID_KERNEL_ARGS; rt names the argument.
func TestUnsetArgumentNamed(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	src := `__kernel void two(__global float* out, float scale) { out[get_global_id(0)] = scale; }`
	for _, opts := range []string{"-cl-kernel-arg-info", ""} {
		prog, err := raw.Build(ctx, "unset"+opts, src, opts)
		if err != nil {
			t.Fatal(err)
		}
		k, err := prog.Kernel("two")
		if err != nil {
			t.Fatal(err)
		}
		buf, err := rt.NewBuffer[float32](ctx, 4)
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.SetBuffer(k, 0, buf); err != nil {
			t.Fatal(err)
		}
		want := "argument 1 ("
		if opts != "" {
			want = "argument 1 (float scale) is not set"
		}
		err = raw.Submit(q, k, rt.Range1(4))
		if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("submit with argument 1 unset (options %q): %v, want ErrInvalidArgument with %q", opts, err, want)
		}
		if _, err := raw.Launch(q, k, rt.Range1(4)); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("launch with argument 1 unset: %v, want ErrInvalidArgument", err)
		}
		if err := raw.SetArg(k, 1, float32(2)); err != nil {
			t.Fatal(err)
		}
		if err := raw.Submit(q, k, rt.Range1(4)); err != nil {
			t.Errorf("submit with both arguments set: %v", err)
		}
		got := make([]float32, 4)
		if err := buf.Read(q, got); err != nil || got[3] != 2 {
			t.Errorf("read %v, %v; want [2 2 2 2]", got, err)
		}
		k.Release()
		prog.Release()
		buf.Free()
	}
}

// Declarations that no generated code registers, as a //dgen: directive
// added without running go generate leaves them.
var (
	unregisteredProgram rt.Program
	unregisteredGlobal  rt.DeviceGlobal[float32]
	unregisteredSite    rt.AllocSite[int32]
	unregisteredConst   rt.SpecConst[int32]
)

// TestNotGeneratedNamed uses each declaration above: the error wraps
// ErrNotGenerated and names the variable (by its symbol, or, in a binary
// without symbols as go test builds, by the source line that used it) and
// that line.
func TestNotGeneratedNamed(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	tests := []struct {
		name string
		call func() error
	}{
		{"unregisteredProgram", func() error { return unregisteredProgram.Build(context.Background(), ctx) }},
		{"unregisteredProgram", func() error { _, err := raw.BuildGenerated(ctx, &unregisteredProgram); return err }},
		{"unregisteredGlobal", func() error { _, err := unregisteredGlobal.Read(q); return err }},
		{"unregisteredSite", func() error { _, err := unregisteredSite.Alloc(q, 4); return err }},
		{"unregisteredConst", func() error { return unregisteredConst.Set(ctx, 4) }},
	}
	for _, tt := range tests {
		err := tt.call()
		name := tt.name
		switch _, file, _, _ := runtime.Caller(0); {
		case core.HasSymbols():
			name = "github.com/dgen-go/dgen/rt_test." + name
		case !readable(file):
			name = "" // a stripped binary away from its sources (a GPU bundle): the line alone
		}
		if !errors.Is(err, rt.ErrNotGenerated) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "names_test.go:") {
			t.Errorf("use of %s: %v, want ErrNotGenerated naming %s and names_test.go", tt.name, err, name)
		}
	}
}

// readable reports whether file can be read.
func readable(file string) bool {
	_, err := os.ReadFile(file)
	return err == nil
}
