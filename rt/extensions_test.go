package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
)

// Kernel specs registered as dgen registers a kernel defined under
// extension guards: one needs an extension no device has, one either of
// that and one every device dgen targets has.
var (
	extProg rt.Program
	extDecl = codegen.Register(&codegen.Program{Var: codegen.ProgramVar(&extProg), ID: pkg + "extProg", Name: "extProg",
		Image: "__kernel void ext1(__global int *p) { p[0] += 1; }\n"})
	extAbsent = codegen.Register(&codegen.Kernel{ID: pkg + "ExtAbsent", Name: "ext1", Program: extDecl, Params: 1,
		Extensions: []string{"cl_khr_byte_addressable_store", "cl_dgen_absent"}})
	extEither = codegen.Register(&codegen.Kernel{ID: pkg + "ExtEither", Name: "ext1", Program: extDecl, Params: 1,
		Extensions: []string{"cl_dgen_absent|cl_khr_byte_addressable_store"}})
)

// TestLaunchExtensions launches both on the device: the first fails
// naming kernel, device and extension; the second runs.
func TestLaunchExtensions(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	buf, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	_, err = codegen.Acquire(q, extAbsent)
	if !errors.Is(err, rt.ErrNoKernel) {
		t.Fatalf("launch on a device without the extension: %v, want ErrNoKernel", err)
	}
	for _, want := range []string{"ExtAbsent", "ext1", q.Device().Name, "lacks extension cl_dgen_absent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	k, err := codegen.Acquire(q, extEither)
	if err != nil {
		t.Fatal(err)
	}
	codegen.SetBuffer(k, 0, buf)
	if err := codegen.Submit(q, k, rt.Range1(1), nil); err != nil {
		t.Fatal(err)
	}
}
