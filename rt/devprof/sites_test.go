package devprof_test

import (
	"context"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/devprof"
)

// Two allocation sites of two packages that share a short name, as dgen
// registers them: each has its own ID and tag, and the same Name.
var scratchA, scratchB rt.AllocSite[float32]

var (
	_ = codegen.Register(&codegen.AllocSite{ID: "example.com/a.scratch", Name: "scratch", Var: codegen.AllocSiteVar(&scratchA)})
	_ = codegen.Register(&codegen.AllocSite{ID: "example.com/b.scratch", Name: "scratch", Var: codegen.AllocSiteVar(&scratchB)})
)

// TestRecordSitesOfOneName records a window of a context that holds memory
// of two sites of one name: the profile's inuse_space of that name is what
// both hold.
func TestRecordSitesOfOneName(t *testing.T) {
	ctx, _ := open(t, rt.Config{})
	q := ctx.Queue()
	a, err := scratchA.Alloc(q, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := scratchB.Alloc(q, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	p, err := devprof.Record(context.Background(), ctx, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	d := ctx.Stats().Alloc.Devices[0]
	ta, tb := d.Tag(alloc.Tag(scratchA.Tag())), d.Tag(alloc.Tag(scratchB.Tag()))
	want := ta.InUse + ta.Held + tb.InUse + tb.Held
	if got := total(t, p, "inuse_space", "scratch"); got != want {
		t.Errorf("inuse_space of scratch = %d, the allocators' in use and held of its two sites %d", got, want)
	}
}
