package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
)

// Declarations registered by hand as generated code registers them.
var (
	scaleProg  rt.Program
	scaleConst rt.SpecConst[int32]
	otherConst rt.SpecConst[int32]

	_scaleConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&scaleConst, 1), ID: pkg + "scaleConst", Name: "SCALE", Default: "1"}
	_otherConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&otherConst, 0), ID: pkg + "otherConst", Name: "UNUSED_BY_SCALE", Default: "0"}
	_scaleProg  = &codegen.Program{Var: codegen.ProgramVar(&scaleProg), ID: pkg + "scaleProg", Name: "scaleProg",
		Image: "__kernel void put_scale(__global int *out) { out[0] = SCALE; }\n", SpecConsts: []*codegen.SpecConst{_scaleConst}}
	scaleKern = &codegen.Kernel{ID: pkg + "PutScale", Name: "put_scale", Program: _scaleProg, Params: 1}
	_         = codegen.Register(_scaleConst)
	_         = codegen.Register(_otherConst)
	_         = codegen.Register(_scaleProg)
	_         = codegen.Register(scaleKern)
)

const pkg = "github.com/dgen-go/dgen/rt_test."

// TestSpecConst checks that a specialization constant reaches the kernel as
// a macro, that each value builds once, that returning to a value reuses
// its build, and that a constant the source does not name builds nothing.
func TestSpecConst(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	out, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	run := func() int32 {
		t.Helper()
		k, err := codegen.Acquire(q, scaleKern)
		if err != nil {
			t.Fatal(err)
		}
		codegen.SetBuffer(k, 0, out)
		if _, err := codegen.Launch(q, k, rt.Range1(1), nil); err != nil {
			t.Fatal(err)
		}
		got := make([]int32, 1)
		if err := out.Read(q, got); err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	builds := func() int64 { s := ctx.Stats().Cache; return s.Builds + s.DiskHits }
	steps := []struct {
		set       *rt.SpecConst[int32]
		value     int32
		want      int32
		newBuilds int64
	}{
		{nil, 0, 1, 1},         // the default
		{&scaleConst, 3, 3, 1}, // a new value: a new program
		{&scaleConst, 5, 5, 1},
		{&scaleConst, 3, 3, 0}, // back to 3: the earlier program
		{&otherConst, 9, 3, 0}, // a constant put_scale does not use
		{&scaleConst, 1, 1, 0}, // the default again
	}
	for i, st := range steps {
		if st.set != nil {
			if err := st.set.Set(ctx, st.value); err != nil {
				t.Fatal(err)
			}
		}
		before := builds()
		if got := run(); got != st.want {
			t.Errorf("step %d: kernel saw SCALE=%d, want %d", i, got, st.want)
		}
		if n := builds() - before; n != st.newBuilds {
			t.Errorf("step %d: %d programs made, want %d", i, n, st.newBuilds)
		}
	}
}

// A constant without a default, as dgen registers one without default=.
var (
	unsetProg  rt.Program
	unsetConst rt.SpecConst[int32]

	_unsetConst = &codegen.SpecConst{Var: codegen.SpecConstVar(&unsetConst, 0), ID: pkg + "unsetConst", Name: "WIDTH"}
	_unsetProg  = &codegen.Program{Var: codegen.ProgramVar(&unsetProg), ID: pkg + "unsetProg", Name: "unsetProg",
		Image: "__kernel void put_width(__global int *out) { out[0] = WIDTH; }\n", SpecConsts: []*codegen.SpecConst{_unsetConst}}
	unsetKern = &codegen.Kernel{ID: pkg + "PutWidth", Name: "put_width", Program: _unsetProg, Params: 1}
	_         = codegen.Register(_unsetConst)
	_         = codegen.Register(_unsetProg)
	_         = codegen.Register(unsetKern)
)

// TestSpecConstUnset checks that a constant with neither a value set nor a
// default fails the build, naming it, and builds once a value is set.
func TestSpecConstUnset(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	_, err := codegen.Acquire(q, unsetKern)
	if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "specialization constant WIDTH has neither a value set") {
		t.Fatalf("Acquire with WIDTH unset = %v, want ErrInvalidArgument naming WIDTH", err)
	}
	if err := unsetConst.Set(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := codegen.Acquire(q, unsetKern); err != nil {
		t.Fatalf("Acquire with WIDTH set: %v", err)
	}
}
