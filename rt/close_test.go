package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
)

// closeSrc is the program of the Close tests: a kernel that adds one to
// every element.
const closeSrc = `__kernel void inc(__global float* b) { b[get_global_id(0)] += 1.0f; }`

// TestCloseReleasesEverything makes one of everything a context hands its
// user to release, releases none of it, and closes the context: Close
// must release every one (Pinned memory and NewBuffer's buffers used to
// stay, 32 MiB a cycle). Afterwards every Free and Release returns nil,
// every other use an error wrapping ErrClosed that names the operation,
// and Pinned.Slice is nil.
func TestCloseReleasesEverything(t *testing.T) {
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testenv.Device()}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	q := ctx.Queue()
	q2, err := ctx.NewQueue(q.Device())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	buf, err := rt.NewBuffer[float32](ctx, 1024)
	must(err)
	view, err := buf.View(256, 256)
	must(err)
	freed, err := rt.NewBuffer[float32](ctx, 16) // freed before Close, freed again after it
	must(err)
	must(freed.Free())
	pinned, err := rt.NewPinned[float32](q, 1024)
	must(err)
	site, err := siteA.Alloc(q, 1024)
	must(err)
	siteView, err := site.View(0, 32)
	must(err)
	img, err := rt.NewImage(ctx, rt.ImageDesc{Kind: rt.Image2D, Order: rt.OrderRGBA, Type: rt.Float, Width: 8, Height: 8})
	must(err)
	ev, err := buf.FillEvent(q, 1)
	must(err)
	prog, err := raw.Build(ctx, "close", closeSrc, "")
	must(err)
	k, err := prog.Kernel("inc")
	must(err)
	must(raw.SetBuffer(k, 0, buf))
	bins, err := prog.Binaries()
	must(err)
	loaded, err := raw.Load(ctx, "close-bin", bins, "")
	must(err)
	lk, err := loaded.Kernel("inc")
	must(err)
	must(benchGlobal.Write(q, 3)) // the storage of a device global
	g, err := q.Record("close", func(rq *rt.Queue) error {
		if _, err := buf.WriteAsync(rq, 0, pinned); err != nil {
			return err
		}
		return raw.Submit(rq, k, rt.Range1(1024))
	})
	must(err)
	must(g.Launch(q2, ev))
	// buf, view, siteView, pinned, img, ev, k, loaded, lk, the global's
	// storage: ten objects that only Close would release (prog is the
	// cache's, site the allocator's, g the graph set's).
	if n := core.Live(cx(ctx)); n < 10 {
		t.Errorf("%d live objects before Close, want at least 10", n)
	}
	if err := ctx.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := core.Live(cx(ctx)); n != 0 {
		t.Errorf("%d live objects after Close, want 0", n)
	}
	if s := pinned.Slice(); s != nil {
		t.Errorf("Pinned.Slice after Close: %d elements, want nil", len(s))
	}

	frees := []struct {
		name string
		call func() error
	}{
		{"Buffer.Free", buf.Free},
		{"Buffer.Free of a buffer freed before Close", freed.Free},
		{"view Buffer.Free", view.Free},
		{"site Buffer.Free", site.Free},
		{"site view Buffer.Free", siteView.Free},
		{"Pinned.Free", pinned.Free},
		{"Image.Free", img.Free},
		{"Event.Release", ev.Release},
		{"Graph.Release", g.Release},
		{"raw.Kernel.Release", k.Release},
		{"loaded raw.Kernel.Release", lk.Release},
		{"raw.Program.Release", prog.Release},
		{"loaded raw.Program.Release", loaded.Release},
		{"Context.Close", ctx.Close},
	}
	for _, f := range frees {
		for i := range 2 {
			if err := f.call(); err != nil {
				t.Errorf("%s after Close (call %d): %v, want nil", f.name, i+1, err)
			}
		}
	}

	uses := []struct {
		name, op string // op: what the message must name
		call     func() error
	}{
		{"Buffer.Write", "write buffer", func() error { return buf.Write(q, []float32{1}) }},
		{"Buffer.Write of nothing", "write buffer", func() error { return buf.Write(q, nil) }},
		{"Buffer.Read", "read buffer", func() error { return buf.Read(q, make([]float32, 4)) }},
		{"view Buffer.Read", "read buffer", func() error { return view.Read(q, make([]float32, 4)) }},
		{"Buffer.Fill", "fill buffer", func() error { return buf.Fill(q, 2) }},
		{"Buffer.View", "view of elements", func() error { _, err := buf.View(0, 32); return err }},
		{"Buffer.ReadAsync", "read buffer", func() error { _, err := buf.ReadAsync(q, 0, pinned); return err }},
		{"Image.Read", "read image2d", func() error { return img.Read(q, rt.ImageRegion{}, make([]float32, 8*8*4)) }},
		{"Event.Wait", "wait for fill buffer", ev.Wait},
		{"raw.Submit", `submit kernel "inc"`, func() error { return raw.Submit(q, k, rt.Range1(1)) }},
		{"raw.Launch", `launch kernel "inc"`, func() error { _, err := raw.Launch(q, lk, rt.Range1(1)); return err }},
		{"raw.SetBuffer", `set argument 0 of kernel "inc"`, func() error { return raw.SetBuffer(k, 0, buf) }},
		{"Graph.Launch", `launch graph "close"`, func() error { return g.Launch(q) }},
		{"Queue.Finish", "finish queue", q2.Finish},
		{"Queue.Marker", "enqueue marker", func() error { _, err := q.Marker(); return err }},
		{"NewBuffer", "allocate 16 bytes", func() error { _, err := rt.NewBuffer[float32](ctx, 4); return err }},
		{"NewPinned", "pinned memory of 16 bytes", func() error { _, err := rt.NewPinned[float32](q, 4); return err }},
		{"AllocSite.Alloc", "allocate 16 bytes for siteA", func() error { _, err := siteA.Alloc(q, 4); return err }},
		{"DeviceGlobal.Read", "read device global", func() error { _, err := benchGlobal.Read(q); return err }},
		{"raw.Build", "build program", func() error { _, err := raw.Build(ctx, "after", closeSrc+"\n", ""); return err }},
		{"Context.NewQueue", "create queue", func() error { _, err := ctx.NewQueue(q.Device()); return err }},
	}
	for _, u := range uses {
		err := u.call()
		if !errors.Is(err, rt.ErrClosed) || !strings.Contains(err.Error(), u.op) {
			t.Errorf("%s after Close: %v; want an error wrapping ErrClosed that names %q", u.name, err, u.op)
		}
	}
}
