package raw_test

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestArgMismatch sets arguments that do not fit the kernel's parameters,
// which only the driver can tell: a by-value argument of the wrong size,
// __local memory for a scalar, a scalar for a __local pointer. The launch
// fails with an error wrapping rt.ErrInvalidArgument, not a bare driver
// code, and runs nothing.
func TestArgMismatch(t *testing.T) {
	ctx := open(t)
	if cuda(ctx) {
		t.Skip("CUDA takes by-value arguments unchecked")
	}
	q := ctx.Queue()
	p := build(t, ctx, "mismatch", `__kernel void set(__global int *p, int v, __local int *l) { l[0] = v; p[get_global_id(0)] = l[0]; }`, "")
	out, err := rt.NewBuffer[int32](ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	for _, c := range []struct {
		name string
		set  func(k *raw.Kernel) error
	}{
		{"int64 for int", func(k *raw.Kernel) error { return raw.SetArg(k, 1, int64(1)) }},
		{"int16 for int", func(k *raw.Kernel) error { return raw.SetArg(k, 1, int16(1)) }},
		{"16 bytes for int", func(k *raw.Kernel) error { return raw.SetArgBytes(k, 1, make([]byte, 16)) }},
		{"local memory for int", func(k *raw.Kernel) error { return k.SetLocal(1, 4) }},
		{"int for local pointer", func(k *raw.Kernel) error { return raw.SetArg(k, 2, int32(4)) }},
	} {
		k := kernel(t, p, "set")
		err := errors.Join(raw.SetBuffer(k, 0, out), raw.SetArg(k, 1, int32(1)), k.SetLocal(2, 4), c.set(k))
		if err != nil {
			t.Fatalf("%s: setting the arguments: %v", c.name, err)
		}
		if err := raw.Submit(q, k, rt.Range1(2)); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("%s: Submit = %v, want an error wrapping rt.ErrInvalidArgument", c.name, err)
		}
		k.Release()
	}
}

// TestSetArgZeroSize: a value of no bytes (an empty struct, a [0]T) is
// refused when it is set, as SetArgBytes refuses no bytes, not taken for
// an argument never set or handed to the driver.
func TestSetArgZeroSize(t *testing.T) {
	ctx := open(t)
	k := kernel(t, build(t, ctx, "zerosize", `__kernel void set(__global int *p, int v) { p[get_global_id(0)] = v; }`, ""), "set")
	if err := raw.SetArg(k, 1, struct{}{}); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("SetArg(struct{}{}) = %v, want an error wrapping rt.ErrInvalidArgument", err)
	}
	if err := raw.SetArg(k, 1, [0]int32{}); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("SetArg([0]int32{}) = %v, want an error wrapping rt.ErrInvalidArgument", err)
	}
}
