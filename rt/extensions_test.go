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
	extDecl = codegen.RegisterProgram(&extProg, codegen.Program{ID: pkg + "extProg", Name: "extProg",
		Image: "__kernel void ext1(__global int *p) { p[0] += 1; }\n"})
	extAbsent = codegen.RegisterKernel(extDecl, codegen.Kernel{ID: pkg + "ExtAbsent", Name: "ext1", Params: 1,
		Extensions: []string{"cl_khr_byte_addressable_store", "cl_dgen_absent"}})
	extEither = codegen.RegisterKernel(extDecl, codegen.Kernel{ID: pkg + "ExtEither", Name: "ext1", Params: 1,
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
	_, err = extAbsent.Acquire(q)
	if !errors.Is(err, rt.ErrNoKernel) {
		t.Fatalf("launch on a device without the extension: %v, want ErrNoKernel", err)
	}
	for _, want := range []string{"ExtAbsent", "ext1", q.Device().Name, "lacks extension cl_dgen_absent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	k, err := extEither.Acquire(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := extEither.Submit(q, k, rt.Range1(1), k.SetBuffer(0, buf.Mem()), nil); err != nil {
		t.Fatal(err)
	}
}
