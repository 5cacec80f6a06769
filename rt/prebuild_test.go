package rt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/stats"
)

// openDiskCached opens a context on PoCL whose persistent cache is dir.
func openDiskCached(t *testing.T, dir string) *rt.Context {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(dir))
	ctx, err := rt.OpenConfig(rt.Config{Device: testenv.Device(), Cache: &cc})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// TestBuildVariantAhead: a variant built ahead, by Program.Build with its
// values or by BuildVariant, is what its first launch finds: that launch
// builds nothing and loads nothing (Stats().Cache), on a fresh context
// with an empty persistent cache and on one with a warm one; a variant not
// built ahead still builds at its first launch.
func TestBuildVariantAhead(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		build func(c context.Context, ctx *rt.Context, scale int32) error
		// builds and disk hits of the build ahead, on an empty and on a
		// warm persistent cache
		cold, warm stats.Cache
	}{
		{"Program.Build", func(c context.Context, ctx *rt.Context, scale int32) error {
			return lsProg.Build(c, ctx, lsScale.Of(scale))
		}, stats.Cache{Builds: 1}, stats.Cache{DiskHits: 1}},
		{"BuildVariant", func(c context.Context, ctx *rt.Context, scale int32) error {
			return rt.BuildVariant(c, ctx, lsScale.Of(scale))
		}, stats.Cache{Builds: 1}, stats.Cache{DiskHits: 1}},
	}
	for i, tt := range tests {
		scale := int32(7 + i)
		for _, cache := range []string{"empty", "warm"} {
			want := tt.cold
			if cache == "warm" {
				want = tt.warm
			}
			ctx := openDiskCached(t, dir)
			if err := tt.build(context.Background(), ctx, scale); err != nil {
				t.Fatalf("%s, %s cache: %v", tt.name, cache, err)
			}
			ahead := ctx.Stats().Cache
			if ahead.Builds != want.Builds || ahead.DiskHits != want.DiskHits {
				t.Errorf("%s, %s cache: the build ahead made %d builds and %d disk hits; want %d and %d", tt.name, cache, ahead.Builds, ahead.DiskHits, want.Builds, want.DiskHits)
			}
			out := lsBuffer(t, ctx)
			got, _, err := lsRun(ctx.Queue(), out, lsScale.Of(scale))
			if err != nil || got != scale {
				t.Fatalf("%s, %s cache: the launch ran with LSCALE=%d (%v); want %d", tt.name, cache, got, err, scale)
			}
			if s := ctx.Stats().Cache; s.Builds != ahead.Builds || s.DiskHits != ahead.DiskHits {
				t.Errorf("%s, %s cache: the first launch of the variant built ahead made %d builds and %d disk hits", tt.name, cache, s.Builds-ahead.Builds, s.DiskHits-ahead.DiskHits)
			}
			// Another variant, not built ahead, builds at its first launch.
			if _, _, err := lsRun(ctx.Queue(), out, lsScale.Of(scale+20)); err != nil {
				t.Fatal(err)
			}
			if s := ctx.Stats().Cache; s.Builds+s.DiskHits == ahead.Builds+ahead.DiskHits {
				t.Errorf("%s, %s cache: a variant not built ahead built nothing at its first launch", tt.name, cache)
			}
			out.Free()
			ctx.Close()
		}
	}
}

// TestBuildVariantMistakes: values that no launch could use fail the build
// loudly, and build nothing.
func TestBuildVariantMistakes(t *testing.T) {
	ctx := openCPU(t)
	bg := context.Background()
	tests := []struct {
		name  string
		build func() error
		want  error
	}{
		{"a constant the program does not use", func() error { return lsProg.Build(bg, ctx, otherConst.Of(1)) }, rt.ErrInvalidArgument},
		{"the zero Spec", func() error { return lsProg.Build(bg, ctx, rt.Spec[int32]{}) }, rt.ErrInvalidArgument},
		{"two values of one constant", func() error { return lsProg.Build(bg, ctx, lsScale.Of(2), lsScale.Of(3)) }, rt.ErrInvalidArgument},
		{"a value above the maximum", func() error { return lsProg.Build(bg, ctx, lsScale.Of(1000)) }, rt.ErrOutOfRange},
		{"a nil value", func() error { return lsProg.Build(bg, ctx, nil) }, rt.ErrInvalidArgument},
		{"BuildVariant of no values", func() error { return rt.BuildVariant(bg, ctx) }, rt.ErrInvalidArgument},
		{"BuildVariant out of bounds", func() error { return rt.BuildVariant(bg, ctx, lsScale.Of(0)) }, rt.ErrOutOfRange},
		{"a done context", func() error {
			c, cancel := context.WithCancel(bg)
			cancel()
			return lsProg.Build(c, ctx, lsScale.Of(4))
		}, context.Canceled},
	}
	for _, tt := range tests {
		if err := tt.build(); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v; want an error wrapping %v", tt.name, err, tt.want)
		}
	}
	if s := ctx.Stats().Cache; s.Builds != 0 || s.DiskHits != 0 || s.MemHits != 0 {
		t.Errorf("the refused builds reached the cache: %+v", s)
	}
}
