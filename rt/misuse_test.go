package rt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestNilArguments calls every exported method that returns an error with
// a nil receiver or a nil pointer argument: each must return an error
// wrapping ErrInvalidArgument (ErrFreed for the zero Buffer, which is a nil
// buffer), never panic. Methods without an error return their zero value;
// Free of the zero Buffer returns nil (TestFreeZero).
func TestNilArguments(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	buf, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	kern := kernelOf(t, ctx, "__kernel void k(__global float* b) { b[0] = 1; }", "k")
	var (
		nc *rt.Context
		nq *rt.Queue
		nk *raw.Kernel
		np *raw.Program
		ne *rt.Event
		nm *core.Mem
		ng *rt.DeviceGlobal[float32]
		nb rt.Buffer[float32]
	)
	invalid := []struct {
		name string
		call func() error
	}{
		{"Context.Close", func() error { return nc.Close() }},
		{"Context.NewQueue", func() error { _, err := nc.NewQueue(nil); return err }},
		{"Context.NewQueue(nil)", func() error { _, err := ctx.NewQueue(nil); return err }},
		{"Context.NewMem", func() error { _, err := cx(nc).NewMem(4); return err }},
		{"Context.ReleaseHeld", func() error { return nc.ReleaseHeld() }},
		{"raw.Build", func() error { _, err := raw.Build(nc, "x", "", ""); return err }},
		{"Context.LoadProgram", func() error { _, err := cx(nc).LoadProgram("x", [][]byte{{1}}, ""); return err }},
		{"Context.SetSpecValue", func() error { return cx(nc).SetSpecValue("A", "1") }},
		{"Context.ClearSpecValue", func() error { return cx(nc).ClearSpecValue("A") }},
		{"NewBuffer(nil)", func() error { _, err := rt.NewBuffer[float32](nil, 4); return err }},
		{"Queue.Flush", func() error { return nq.Flush() }},
		{"Queue.Finish", func() error { return nq.Finish() }},
		{"Queue.Marker", func() error { _, err := nq.Marker(); return err }},
		{"raw.Launch", func() error { _, err := raw.Launch(nq, kern, rt.Range1(1)); return err }},
		{"raw.Launch(nil kernel)", func() error { _, err := raw.Launch(q, nk, rt.Range1(1)); return err }},
		{"raw.Submit", func() error { return raw.Submit(nq, kern, rt.Range1(1)) }},
		{"raw.Submit(nil kernel)", func() error { return raw.Submit(q, nk, rt.Range1(1)) }},
		{"Buffer.Write(nil queue)", func() error { return buf.Write(nq, []float32{1}) }},
		{"Buffer.Read(nil queue)", func() error { return buf.Read(nq, []float32{1}) }},
		{"Buffer.Fill(nil queue)", func() error { return buf.Fill(nq, 1) }},
		{"Buffer.CopyTo(nil queue)", func() error { return buf.CopyTo(nq, buf) }},
		{"Alloc(nil queue)", func() error { _, err := rt.Alloc[float32](nq, 4); return err }},
		{"AllocSite.Alloc(nil queue)", func() error { _, err := siteA.Alloc(nq, 4); return err }},
		{"Mem.Free", func() error { return nm.Free() }},
		{"Mem.Driver", func() error { _, err := nm.Driver(); return err }},
		{"raw.SetBuffer", func() error { return raw.SetBuffer(nk, 0, buf) }},
		{"raw.SetBuffer(zero buffer)", func() error { return raw.SetBuffer(kern, 0, rt.Buffer[float32]{}) }},
		{"raw.Kernel.SetLocal", func() error { return nk.SetLocal(0, 4) }},
		{"raw.SetArg", func() error { return raw.SetArg(nk, 0, int32(1)) }},
		{"raw.Kernel.Release", func() error { return nk.Release() }},
		{"raw.Kernel.SetImage", func() error { return nk.SetImage(0, rt.Image{}, "read_only") }},
		{"raw.Kernel.SetSampler", func() error { return nk.SetSampler(0, rt.Sampler{}) }},
		{"raw.Kernel.WorkGroupInfo", func() error { _, err := nk.WorkGroupInfo(nil); return err }},
		{"raw.Program.Kernel", func() error { _, err := np.Kernel("k"); return err }},
		{"builtProgram.Binaries", func() error { _, err := core.NilProgram().Binaries(); return err }},
		{"builtProgram.KernelNames", func() error { _, err := core.NilProgram().KernelNames(); return err }},
		{"raw.Program.Release", func() error { return np.Release() }},
		{"Event.Status", func() error { _, err := ce(ne).Status(); return err }},
		{"Event.Timing", func() error { _, err := ne.Timing(); return err }},
		{"codegen.Launch(nil kernel)", func() error { _, err := codegen.Launch(q, nil, rt.Range1(1), nil); return err }},
		{"DeviceGlobal.Write", func() error { return ng.Write(q, 1) }},
		{"DeviceGlobal.Read", func() error { _, err := ng.Read(q); return err }},
		{"raw.BuildGenerated(nil context)", func() error { _, err := raw.BuildGenerated(nil, &scaleProg); return err }},
		{"codegen.Acquire(nil queue)", func() error { _, err := codegen.Acquire(nq, scaleKern); return err }},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			err := call(tc.call)
			if !errors.Is(err, rt.ErrInvalidArgument) && !errors.Is(err, rt.ErrNotGenerated) {
				t.Errorf("error %v, want one wrapping ErrInvalidArgument", err)
			}
		})
	}
	freed := []struct {
		name string
		call func() error
	}{
		{"zero Buffer.Write", func() error { return nb.Write(q, []float32{1}) }},
		{"zero Buffer.CopyTo", func() error { return buf.CopyTo(q, nb) }},
	}
	for _, tc := range freed {
		t.Run(tc.name, func(t *testing.T) {
			if err := call(tc.call); !errors.Is(err, rt.ErrInvalidArgument) && !errors.Is(err, rt.ErrFreed) {
				t.Errorf("error %v, want one wrapping ErrInvalidArgument or ErrFreed", err)
			}
		})
	}
	// Accessors return zero values; Wait and Release of a nil Event do nothing.
	noPanic := map[string]func() error{
		"accessors": func() error {
			_, _, _ = nc.Devices(), nc.Queue(), nc.Stats().Alloc
			_, _ = nc.Stats().Cache, cx(nc).SpecValues()
			_, _, _ = nq.Context(), nq.Device(), cq(nq).Profiling()
			_, _ = nk.Name(), (*core.RawKernel)(nk).NumArgs()
			_ = np.Name()
			return nil
		},
		"Event.Wait":    func() error { return ne.Wait() },
		"Event.Release": func() error { return ne.Release() },
	}
	for name, f := range noPanic {
		if err := call(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// call runs f and turns a panic into an error.
func call(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// TestForeignContext uses objects of one context with another: every use
// is an error wrapping ErrInvalidArgument that names both contexts'
// devices, and nothing reaches the driver.
func TestForeignContext(t *testing.T) {
	ctx1, ctx2 := openCPU(t), openCPU(t)
	q1, q2 := ctx1.Queue(), ctx2.Queue()
	src := "__kernel void k(__global float* b) { b[0] = 1; }"
	k1 := kernelOf(t, ctx1, src, "k")
	b1, err := rt.NewBuffer[float32](ctx1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b1.Free()
	b2, err := siteA.Alloc(q2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Free()
	ev1, err := q1.Marker()
	if err != nil {
		t.Fatal(err)
	}
	defer ev1.Release()
	if err := raw.SetBuffer(k1, 0, b1); err != nil {
		t.Fatal(err)
	}
	spec := core.NewKernelSpec(&core.ProgramImage{ID: "foreign", Name: "foreign", Source: src}, "k")
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"raw.SetBuffer", func() error { return raw.SetBuffer(k1, 0, b2) }},
		{"raw.Launch", func() error { _, err := raw.Launch(q2, k1, rt.Range1(1)); return err }},
		{"raw.Submit", func() error { return raw.Submit(q2, k1, rt.Range1(1)) }},
		{"Buffer.Write", func() error { return b1.Write(q2, []float32{1}) }},
		{"Buffer.Read", func() error { return b2.Read(q1, []float32{1}) }},
		{"Buffer.Fill", func() error { return b1.Fill(q2, 1) }},
		{"Buffer.CopyTo", func() error { return b1.CopyTo(q1, b2) }},
		{"wait list", func() error { _, err := q2.Marker(ev1); return err }},
		{"Context.NewQueue", func() error { _, err := ctx2.NewQueue(ctx1.Devices()[0]); return err }},
		{"Context.KernelFor", func() error { _, err := cx(ctx2).KernelFor(spec, cq(q1)); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := call(tc.call)
			if !errors.Is(err, rt.ErrInvalidArgument) {
				t.Fatalf("error %v, want one wrapping ErrInvalidArgument", err)
			}
			dev := ctx1.Devices()[0].Name
			if got := err.Error(); strings.Count(got, dev) < 2 && tc.name != "Context.NewQueue" {
				t.Errorf("error %q does not name both contexts' devices (%q)", got, dev)
			}
		})
	}
}

// TestFreeZero: Free of the zero Buffer returns nil, every time, as
// free(NULL) does; what Free reports of a real buffer is unchanged: nil,
// then ErrFreed.
func TestFreeZero(t *testing.T) {
	ctx := openCPU(t)
	b, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	var zero rt.Buffer[int32]
	tests := []struct {
		name string
		free func() error
		want error // nil: Free returns nil
	}{
		{"zero Buffer", zero.Free, nil},
		{"zero Buffer again", zero.Free, nil},
		{"zero Buffer of another type", rt.Buffer[float64]{}.Free, nil},
		{"a buffer", b.Free, nil},
		{"a buffer again", b.Free, rt.ErrFreed},
	}
	for _, tt := range tests {
		err := tt.free()
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("Free of %s: %v; want %v", tt.name, err, tt.want)
		}
	}
}
