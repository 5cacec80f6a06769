package main

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// BenchmarkLaunch compares a generated Enqueue with a raw rt launch of the
// same kernel, and a 4-byte DeviceGlobal Read/Write with a raw 4-byte Buffer
// Read/Write.
func BenchmarkLaunch(b *testing.B) {
	ctx, err := rt.Open()
	if err != nil {
		b.Skip(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	out, _ := rt.NewBuffer[uint32](ctx, 2)
	defer out.Free()
	b.Run("generated", func(b *testing.B) {
		for b.Loop() {
			ev, err := (&Report{Out: out}).Enqueue(q, rt.Range1(1))
			if err != nil {
				b.Fatal(err)
			}
			ev.Wait()
		}
	})
	p, err := Reporting.Build(ctx)
	if err != nil {
		b.Fatal(err)
	}
	k, err := p.Kernel("report")
	if err != nil {
		b.Fatal(err)
	}
	c, _ := rt.NewBuffer[uint32](ctx, 1)
	s, _ := rt.NewBuffer[uint32](ctx, 1)
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			k.SetBuffer(0, out.Mem())
			k.SetBuffer(1, c.Mem())
			k.SetBuffer(2, s.Mem())
			ev, err := q.Launch(k, rt.Range1(1))
			if err != nil {
				b.Fatal(err)
			}
			ev.Wait()
		}
	})
}

func BenchmarkGlobalRW(b *testing.B) {
	ctx, err := rt.Open()
	if err != nil {
		b.Skip(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	b.Run("global", func(b *testing.B) {
		for b.Loop() {
			Counter.Write(q, 1)
			Counter.Read(q)
		}
	})
	buf, _ := rt.NewBuffer[uint32](ctx, 1)
	v := []uint32{1}
	b.Run("buffer", func(b *testing.B) {
		for b.Loop() {
			buf.Write(q, v)
			buf.Read(q, v)
		}
	})
}
