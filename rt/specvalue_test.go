package rt_test

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
)

// Constants registered as generated code registers them: N for the
// cache's tests, and constants with bounds of several types.
var (
	nConst    rt.SpecConst[int32]
	tileConst rt.SpecConst[int32]
	gainConst rt.SpecConst[float32]
	flagConst rt.SpecConst[bool]
	maskConst rt.SpecConst[uint64]

	_ = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&nConst, 1), ID: pkg + "nConst", Name: "N", Default: "1"})
	_ = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&tileConst, 16), ID: pkg + "tileConst", Name: "TILE", Default: "16",
		Min: "4", Max: "64", Tune: []string{"8", "16", "32"}})
	_ = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&gainConst, 0.5), ID: pkg + "gainConst", Name: "GAIN", Default: "5e-01f",
		Min: "0e+00f", Max: "1e+00f"})
	_ = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&flagConst, true), ID: pkg + "flagConst", Name: "FLAG", Default: "1"})
	_ = codegen.Register(&codegen.SpecConst{Var: codegen.SpecConstVar(&maskConst, 255), ID: pkg + "maskConst", Name: "MASK", Default: "255UL"})
)

// TestSpecValueChecked checks that SetSpecValue refuses, at the call, a
// name no registered constant has, a value that is not of the constant's
// type and one outside its bounds, and that what it accepts is what
// Value reports.
func TestSpecValueChecked(t *testing.T) {
	ctx := openCPU(t)
	for _, tc := range []struct {
		name, value string
		want        error // nil: accepted
	}{
		{"TILE", "abc", rt.ErrInvalidArgument},
		{"TILE", "1.5", rt.ErrInvalidArgument},
		{"TILE", "3000000000", rt.ErrInvalidArgument}, // overflows int32
		{"TILE", "2", rt.ErrOutOfRange},
		{"TILE", "65", rt.ErrOutOfRange},
		{"TLIE", "3", rt.ErrInvalidArgument}, // a misspelling
		{"GAIN", "2", rt.ErrOutOfRange},
		{"GAIN", "-0.5f", rt.ErrOutOfRange},
		{"GAIN", "x", rt.ErrInvalidArgument},
		{"FLAG", "2", rt.ErrInvalidArgument},
		{"MASK", "-1", rt.ErrInvalidArgument},
		{"TILE", "32", nil},
		{"TILE", "0x10", nil},
		{"GAIN", "0.25f", nil},
		{"FLAG", "false", nil},
		{"MASK", "18446744073709551615UL", nil},
	} {
		err := cx(ctx).SetSpecValue(tc.name, tc.value)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("SetSpecValue(%q, %q) = %v, want %v", tc.name, tc.value, err, tc.want)
		}
	}
	if v := tileConst.Value(ctx); v != 16 {
		t.Errorf("TILE after 0x10: Value = %d, want 16", v)
	}
	if v := gainConst.Value(ctx); v != 0.25 {
		t.Errorf("GAIN: Value = %v, want 0.25", v)
	}
	if v := flagConst.Value(ctx); v {
		t.Errorf("FLAG: Value = %v, want false", v)
	}
	if v := maskConst.Value(ctx); v != 1<<64-1 {
		t.Errorf("MASK: Value = %d", v)
	}
	if err := cx(ctx).ClearSpecValue("TLIE"); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("ClearSpecValue(TLIE) = %v, want ErrInvalidArgument", err)
	}
	if err := cx(ctx).ClearSpecValue("TILE"); err != nil {
		t.Fatal(err)
	}
	if v := tileConst.Value(ctx); v != 16 {
		t.Errorf("TILE cleared: Value = %d, want the default 16", v)
	}
	if err := tileConst.Set(ctx, 64); err != nil {
		t.Fatal(err)
	}
	if v := tileConst.Value(ctx); v != 64 {
		t.Errorf("TILE: Value = %d, want 64", v)
	}
	if err := tileConst.Set(ctx, 128); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("Set(TILE, 128) = %v, want ErrOutOfRange", err)
	}
	if v := tileConst.Value(nil); v != 16 {
		t.Errorf("Value(nil) = %d, want the default", v)
	}
	var unreg rt.SpecConst[int32]
	if v := unreg.Value(ctx); v != 0 {
		t.Errorf("unregistered: Value = %d", v)
	}
}

// TestSpecValueCanonical checks that two spellings of one value share a
// build.
func TestSpecValueCanonical(t *testing.T) {
	ctx := openCPU(t)
	for _, v := range []string{"32", "0x20", "32"} {
		if err := cx(ctx).SetSpecValue("TILE", v); err != nil {
			t.Fatal(err)
		}
		if got := cx(ctx).SpecValues(); len(got) != 1 || got[0].Value != "32" {
			t.Errorf("after %q: SpecValues = %v, want TILE=32", v, got)
		}
	}
}
