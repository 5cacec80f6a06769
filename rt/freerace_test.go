package rt_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// TestFreeDuringCommandKeepsUse: a Free of allocator memory while a
// command that uses it on queue A is inside the driver leaves the release
// to the command's return; the block's last uses must then include the
// command, so that its reuse on queue B is ordered after it
// (Device.Order), not handed out as if A never used it.
func TestFreeDuringCommandKeepsUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(h func()) // installs the hook that holds the command (nil: none)
		call func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error
	}{
		{"fill", func(h func()) {
			if h == nil {
				fakeFillHook.Store(nil)
				return
			}
			f := func(int64) { h() }
			fakeFillHook.Store(&f)
		}, func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error { return b.Fill(q, 7) }},
		{"copy from", func(h func()) {
			if h == nil {
				fakeCopyHook.Store(nil)
				return
			}
			f := func(int64) { h() }
			fakeCopyHook.Store(&f)
		}, func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error {
			dst, err := rt.NewBuffer[int32](ctx, b.Len())
			if err != nil {
				return err
			}
			defer dst.Free()
			return b.CopyTo(q, dst)
		}},
		{"copy to", func(h func()) {
			if h == nil {
				fakeCopyHook.Store(nil)
				return
			}
			f := func(int64) { h() }
			fakeCopyHook.Store(&f)
		}, func(ctx *rt.Context, q *rt.Queue, b rt.Buffer[int32]) error {
			src, err := rt.NewBuffer[int32](ctx, b.Len())
			if err != nil {
				return err
			}
			defer src.Free()
			return src.CopyTo(q, b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := openFake(t, nil)
			qa := ctx.Queue()
			qb, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				t.Fatal(err)
			}
			defer qb.Release()
			const n = 256
			call := tc.call
			b, err := rt.Alloc[int32](qa, n)
			if err != nil {
				t.Fatal(err)
			}
			block := memOf(b).BlockID()
			enter, leave := make(chan struct{}), make(chan struct{})
			tc.hold(func() { enter <- struct{}{}; <-leave })
			defer tc.hold(nil)
			done := make(chan error, 1)
			go func() { done <- call(ctx, qa, b) }()
			<-enter
			if err := b.Free(); err != nil {
				t.Fatalf("Free during the command: %v", err)
			}
			tc.hold(nil)
			close(leave)
			if err := <-done; err != nil {
				t.Fatalf("the command: %v", err)
			}
			before := ctx.Stats().Alloc.Total().Ordered
			re, err := rt.Alloc[int32](qb, n)
			if err != nil {
				t.Fatal(err)
			}
			defer re.Free()
			if memOf(re).BlockID() != block {
				t.Fatal("the block was not reused")
			}
			if got := ctx.Stats().Alloc.Total().Ordered - before; got != 1 {
				t.Errorf("reuse on queue B of a block that a %s on queue A used, freed during it: %d ordered reuses; want 1", tc.name, got)
			}
		})
	}
}
