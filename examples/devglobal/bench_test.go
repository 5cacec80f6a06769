package main

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	_ "github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// launchEvery is how many launches a launch benchmark enqueues before it
// drains the queue with Finish.
const launchEvery = 256

// BenchmarkLaunch compares the host cost of a generated launch of the
// kernel report (one buffer argument and two device globals, bound as
// hidden arguments) with rt/raw's calls doing the same: setting the
// three arguments on a kernel object and launching it. enqueue and submit
// create no event (the generated Enqueue and raw.Submit);
// enqueue-event and launch create one and release it (EnqueueEvent and
// raw.Launch). The queue is drained every launchEvery launches.
func BenchmarkLaunch(b *testing.B) {
	ctx, err := rt.Open()
	if err != nil {
		b.Skip(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	out, _ := rt.NewBuffer[uint32](ctx, 2)
	defer out.Free()
	p, err := raw.BuildGenerated(ctx, &Reporting)
	if err != nil {
		b.Fatal(err)
	}
	k, err := p.Kernel("report")
	if err != nil {
		b.Fatal(err)
	}
	defer k.Release()
	c, _ := rt.NewBuffer[uint32](ctx, 1)
	s, _ := rt.NewBuffer[uint32](ctx, 1)
	defer c.Free()
	defer s.Free()
	rawArgs := func() {
		raw.SetBuffer(k, 0, out)
		raw.SetBuffer(k, 1, c)
		raw.SetBuffer(k, 2, s)
	}
	for _, bc := range []struct {
		name   string
		launch func() error
	}{
		{"enqueue", func() error { return (&Report{Out: out}).Enqueue(q, rt.Range1(1)) }},
		{"submit", func() error { rawArgs(); return raw.Submit(q, k, rt.Range1(1)) }},
		{"enqueue-event", func() error {
			ev, err := (&Report{Out: out}).EnqueueEvent(q, rt.Range1(1))
			ev.Release()
			return err
		}},
		{"launch", func() error {
			rawArgs()
			ev, err := raw.Launch(q, k, rt.Range1(1))
			ev.Release()
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if err := bc.launch(); err != nil { // first use builds and binds
				b.Fatal(err)
			}
			q.Finish()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := bc.launch(); err != nil {
					b.Fatal(err)
				}
				if i++; i%launchEvery == 0 {
					q.Finish()
				}
			}
			q.Finish()
		})
	}
}

// BenchmarkGlobalRW compares a 4-byte DeviceGlobal Write and Read with a
// 4-byte Buffer Write and Read.
func BenchmarkGlobalRW(b *testing.B) {
	ctx, err := rt.Open()
	if err != nil {
		b.Skip(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	b.Run("global", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Counter.Write(q, 1)
			Counter.Read(q)
		}
	})
	buf, _ := rt.NewBuffer[uint32](ctx, 1)
	v := []uint32{1}
	b.Run("buffer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Write(q, v)
			buf.Read(q, v)
		}
	})
}
