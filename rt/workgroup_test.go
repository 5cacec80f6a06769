package rt_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

const localSource = `
__kernel void two_locals(__global float* out, __local float* a, __local float* b) {
	size_t l = get_local_id(0);
	a[l] = 1.0f; b[l] = 2.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
	out[get_global_id(0)] = a[l] + b[l];
}
`

// TestLocalMemoryAndWorkGroupLimits checks, on PoCL, that local memory and
// work-group sizes beyond the device's or the kernel's limits are errors
// that give the limits, before the driver sees them (PoCL aborts the
// process on an oversized __local argument), and that the limits are
// exposed.
func TestLocalMemoryAndWorkGroupLimits(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	dev := q.Device()
	if dev.LocalMemSize <= 0 || dev.MaxWorkGroupSize <= 0 {
		t.Fatalf("device %q: local memory %d, max work-group %d", dev.Name, dev.LocalMemSize, dev.MaxWorkGroupSize)
	}
	k := kernelOf(t, ctx, localSource, "two_locals")
	info, err := k.WorkGroupInfo(dev)
	if err != nil {
		t.Fatal(err)
	}
	if info.WorkGroupSize <= 0 || info.WorkGroupSize > dev.MaxWorkGroupSize {
		t.Errorf("kernel work-group size %d, device maximum %d", info.WorkGroupSize, dev.MaxWorkGroupSize)
	}
	out, err := rt.NewBuffer[float32](ctx, 2*info.WorkGroupSize)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	lm := int(dev.LocalMemSize)
	tooBig := rt.Local[float32]{Len: 1 << 24}
	wantErr := func(t *testing.T, err error, limits ...int) {
		t.Helper()
		if !errors.Is(err, rt.ErrInvalidArgument) {
			t.Fatalf("error %v, want one wrapping ErrInvalidArgument", err)
		}
		for _, n := range limits {
			if !strings.Contains(err.Error(), strconv.Itoa(n)) {
				t.Errorf("error %q does not give the limit %d", err, n)
			}
		}
	}
	t.Run("argument-larger-than-device", func(t *testing.T) {
		wantErr(t, k.SetLocal(1, tooBig.Bytes()), tooBig.Bytes(), lm)
	})
	t.Run("arguments-together-larger", func(t *testing.T) {
		// Each fits; together they do not.
		half := lm/2 + 64
		if err := errors.Join(k.SetLocal(1, half), k.SetLocal(2, half)); err != nil {
			t.Fatal(err)
		}
		_, err := raw.Launch(q, k, rt.Range1(64).WithLocal(64))
		wantErr(t, err, 2*half, lm)
		wantErr(t, raw.Submit(q, k, rt.Range1(64).WithLocal(64)), 2*half, lm)
	})
	if err := errors.Join(k.SetLocal(1, 4*info.WorkGroupSize), k.SetLocal(2, 4*info.WorkGroupSize)); err != nil {
		t.Fatal(err)
	}
	t.Run("work-group-larger-than-kernel", func(t *testing.T) {
		n := 2 * info.WorkGroupSize
		_, err := raw.Launch(q, k, rt.Range1(n).WithLocal(n))
		wantErr(t, err, n, info.WorkGroupSize)
	})
	t.Run("within-limits", func(t *testing.T) {
		n := info.WorkGroupSize
		if err := raw.Submit(q, k, rt.Range1(2*n).WithLocal(n)); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 2*n)
		if err := out.Read(q, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != 3 {
				t.Fatalf("out[%d] = %v, want 3", i, v)
			}
		}
	})
	t.Run("same-range-more-local-memory", func(t *testing.T) {
		// The range passed just now; the arguments' local memory no
		// longer fits, and the launch must be checked again.
		n, half := info.WorkGroupSize, lm/2+64
		if err := errors.Join(k.SetLocal(1, half), k.SetLocal(2, half)); err != nil {
			t.Fatal(err)
		}
		wantErr(t, raw.Submit(q, k, rt.Range1(2*n).WithLocal(n)), 2*half, lm)
	})
}

// TestRequiredWorkGroupSize launches a kernel whose reqd_work_group_size
// is 8×1×1: without that local size, or with another, the launch fails
// before the driver (which says only CL_INVALID_WORK_GROUP_SIZE) with an
// error that names the size; with it, the kernel runs.
func TestRequiredWorkGroupSize(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	const src = `__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void ids(__global int *out) { out[get_global_id(0)] = get_local_id(0); }`
	prog, err := raw.Build(ctx, "reqd", src, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	k, err := prog.Kernel("ids")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	const n = 32
	out, err := rt.NewBuffer[int32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    rt.Range
		want []string // in the error; nil: the launch runs
	}{
		{rt.Range1(n), []string{"8×1×1", "reqd_work_group_size", ".WithLocal(8)"}},
		{rt.Range1(n).WithLocal(4), []string{"8×1×1", "reqd_work_group_size"}},
		{rt.Range2(n, 1).WithLocal(8, 1), nil},
		{rt.Range1(n).WithLocal(8), nil},
	} {
		_, err := raw.Launch(q, k, tc.r)
		if tc.want == nil {
			if err != nil {
				t.Errorf("range %v: %v", tc.r, err)
			}
			continue
		}
		if !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("range %v: %v; want ErrInvalidArgument", tc.r, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("range %v: %v; want it to say %q", tc.r, err, w)
			}
		}
	}
	got := make([]int32, n)
	if err := out.Read(q, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int32(i%8) {
			t.Fatalf("out[%d] = %d, want local id %d", i, v, i%8)
		}
	}
}
